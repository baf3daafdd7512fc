"""A collection's documents and questions as the next build will see them, read without dbt: Docent's from its seed
files (seeds/docs.csv, seeds/golden_questions.csv, in the file's order, as the build's staging models number them),
an imported collection's from raw.documents and raw.questions. `rank` ranks these, and the writers check a run's
doc ids against them.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from retrieval_metrics.dbt_runner import project_dir
from retrieval_metrics.warehouse import SEEDED_COLLECTION, InputError, shown, sql_literal


def seed_file(name: str) -> Path:
    return project_dir() / "seeds" / f"{name}.csv"


def seed_rows(name: str, columns: str) -> str:
    """A query of a Docent seed file's rows, every value as text (as the staging models cast them), numbered in
    the file's order (`line`: the file's line, the header being line 1)."""
    path = seed_file(name)
    if not path.is_file():
        raise InputError(f"{shown(path)}: Docent's seed file is missing (the project's seeds/ folder)")
    return (f"select {columns}, cast(row_number() over () + 1 as integer) as line "
            f"from read_csv({sql_literal(path)}, header = true, all_varchar = true)")  # fmt: skip


def documents_sql(collection_id: str) -> str:
    """The collection's documents: doc_id, title, doc_text, in doc_position order (the order ties keep)."""
    if collection_id == SEEDED_COLLECTION:
        return f"select doc_id, title, text as doc_text from ({seed_rows('docs', 'doc_id, title, text')}) order by line"
    # by doc_id: stg_raw__documents numbers an imported collection's documents so
    return (f"select doc_id, title, doc_text from raw.documents where collection_id = {sql_literal(collection_id)} "
            "order by doc_id")  # fmt: skip


def doc_positions_sql(collection_id: str) -> str:
    """The collection's doc ids with their doc_position (1 first), as the build numbers them: Docent's in the seed
    file's order, an imported collection's by doc_id."""
    if collection_id == SEEDED_COLLECTION:
        return f"select doc_id, line - 1 as doc_position from ({seed_rows('docs', 'doc_id')})"
    return (f"select doc_id, row_number() over (order by doc_id) as doc_position from raw.documents "
            f"where collection_id = {sql_literal(collection_id)}")  # fmt: skip


def questions_sql(collection_id: str) -> str:
    """The collection's questions: question_id, question_text, by question id."""
    if collection_id == SEEDED_COLLECTION:
        return (f"select question_id, question as question_text from "
                f"({seed_rows('golden_questions', 'question_id, question')}) order by question_id")  # fmt: skip
    return (f"select question_id, question_text from raw.questions where collection_id = {sql_literal(collection_id)} "
            "order by question_id")  # fmt: skip


def check_seed_ids(con: duckdb.DuckDBPyConnection) -> None:
    """Docent's seed ids are present and unique (what the seeds' tests check in the build): InputError naming the
    file and line of the first that is not."""
    for name, key in (("docs", "doc_id"), ("golden_questions", "question_id")):
        found = con.execute(
            f"select line, {key}, n > 1 from (select *, count(*) over (partition by {key}) as n "
            f"from ({seed_rows(name, key)})) where {key} is null or n > 1 order by line limit 1"
        ).fetchone()
        if found:
            line, value, repeated = found
            why = f"{key} {value!r} appears more than once" if repeated else f"no {key}"
            raise InputError(f"{shown(seed_file(name))}:{line}: {why}")


def read_collection(
    con: duckdb.DuckDBPyConnection, collection_id: str
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
    """The collection's documents (doc_id, title, text) in doc_position order and (question_id, question)."""
    if collection_id == SEEDED_COLLECTION:
        check_seed_ids(con)
    documents = [(d, t or "", x or "") for d, t, x in con.execute(documents_sql(collection_id)).fetchall()]
    questions = [(q, x or "") for q, x in con.execute(questions_sql(collection_id)).fetchall()]
    if not documents or not questions:
        missing = "documents" if not documents else "questions"
        from retrieval_metrics.raw_tables import elsewhere

        raise InputError(f"collection {collection_id!r} has no {missing}: a collection gets them from its seeds "
                         f"(docent) or from `retrieval-metrics import --beir`{elsewhere(con, collection_id)}")  # fmt: skip
    return documents, questions
