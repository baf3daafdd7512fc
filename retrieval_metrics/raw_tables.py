"""The one writer of the raw tables: runs and their rankings, a collection's judgments (with its documents and
questions), and the dense retriever's embedding cache.

Every function here runs inside the caller's transaction (warehouse.transaction), which also creates the raw
schema; the caller commits or rolls back. Rows move as SQL (a query over a file, a temp table or unnested
lists), never row by row from Python.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

import duckdb

from retrieval_metrics.warehouse import SEEDED_COLLECTION, InputError, check_identifier


@dataclass(frozen=True)
class Run:
    """What raw.runs records of a run: its key, the retriever (or the run file's tag) and its parameters, and
    its ir_metadata (the run file's block, or the API's mapping; None: the run has none)."""

    collection_id: str
    run_id: str
    retriever: str
    parameters: Mapping[str, object] = field(default_factory=dict)
    ir_metadata: Mapping[str, object] | None = None


# raw.runs.ir_metadata, added to a warehouse when it first gets a run with metadata: a warehouse without it builds
# as before (stg_raw__runs reads null), and so do inserts that name no such column
IR_METADATA_COLUMN = "alter table raw.runs add column if not exists ir_metadata varchar"


def json_value(value: object) -> object:
    """json.dumps's fallback for what YAML reads and JSON has not got: a date or time as its ISO text."""
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    raise TypeError(f"{type(value).__name__} {value!r} is not JSON")


def metadata_json(metadata: Mapping[str, object]) -> str:
    """A run's ir_metadata as the JSON text raw.runs keeps (keys in their order); TypeError or ValueError for what
    JSON cannot hold (a NaN, a key that is not text or a number)."""
    return json.dumps(dict(metadata), ensure_ascii=False, allow_nan=False, default=json_value)


@dataclass(frozen=True)
class Ranking:
    """One run's rankings, column-wise: row i says question_ids[i] ranked doc_ids[i] at ranks[i]."""

    question_ids: Sequence[str]
    doc_ids: Sequence[str]
    ranks: Sequence[int]
    scores: Sequence[float]
    # per row, the question terms the doc matched (any order; stored sorted and joined); None: not reported
    matched_terms: Sequence[Collection[str] | None] | None = None

    def as_rows(self) -> tuple[str, list[object]]:
        """The rows as a query for replace_run: the lists unnest together, with no Python loop over rows."""
        matched = self.matched_terms if self.matched_terms is not None else [None] * len(self.ranks)
        sql = """
            select unnest(?::varchar[]) as question_id, unnest(?::varchar[]) as doc_id,
                unnest(?::integer[]) as rank, unnest(?::double[]) as score,
                array_to_string(list_sort(unnest(?::varchar[][])), ', ') as matched_terms
            """
        terms = [None if t is None else list(t) for t in matched]
        return sql, [list(self.question_ids), list(self.doc_ids), list(self.ranks), list(self.scores), terms]


def replace_run(con: duckdb.DuckDBPyConnection, run: Run, rows: str, params: Sequence[object] = ()) -> int:
    """Replace one run of one collection in raw.runs / raw.rankings; other runs are never touched.

    `rows` is a query (with `params`) giving question_id, doc_id, rank, score and matched_terms.
    Returns the number of ranking rows written.
    """
    check_identifier("collection", run.collection_id)
    check_identifier("run id", run.run_id)
    metadata: list[object] = []
    if run.ir_metadata is not None:
        try:
            metadata = [metadata_json(run.ir_metadata)]
        except (TypeError, ValueError) as exc:
            raise InputError(f"run {run.run_id!r}: its ir_metadata cannot be stored as JSON: {exc}") from None
        con.execute(IR_METADATA_COLUMN)
    key = [run.collection_id, run.run_id]
    for table in ("rankings", "runs", "question_latencies", "chunk_rankings"):
        con.execute(f"delete from raw.{table} where collection_id = ? and run_id = ?", key)
    written = con.execute(
        f"""
        insert into raw.rankings (collection_id, run_id, question_id, doc_id, rank, score, matched_terms)
        select ?, ?, question_id, doc_id, rank, score, matched_terms from ({rows}) as run_rows
        """,
        [*key, *params],
    ).fetchone()
    con.execute(
        f"""
        insert into raw.runs (collection_id, run_id, retriever, parameters, created_at, run_version
            {", ir_metadata" if metadata else ""})
        values (?, ?, ?, ?, cast(now() at time zone 'UTC' as timestamp), cast(gen_random_uuid() as varchar)
            {", ?" if metadata else ""})
        """,
        [*key, run.retriever, json.dumps(dict(run.parameters), sort_keys=True), *metadata],
    )
    return int(written[0]) if written else 0


def check_judged(con: duckdb.DuckDBPyConnection, collection_id: str) -> None:
    """InputError unless the collection has judgments for a run to be scored against: Docent's are its seeds,
    an imported collection's are in raw.qrels."""
    if collection_id == SEEDED_COLLECTION:
        return
    found = con.execute("select count(*) from raw.qrels where collection_id = ?", [collection_id]).fetchone()
    if not (found and found[0]):
        raise InputError(f"collection {collection_id!r} has no judgments yet: import --qrels (or --beir) first"
                         f"{elsewhere(con, collection_id)}")  # fmt: skip


def collection_ids(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every collection the warehouse holds anything of (Docent's seeds always), in order."""
    held = " union ".join(f"select collection_id from raw.{table}" for table in ("qrels", "questions", "documents", "runs"))
    return sorted({SEEDED_COLLECTION, *(c for (c,) in con.execute(held).fetchall())})


def elsewhere(con: duckdb.DuckDBPyConnection, collection_id: str) -> str:
    """For an error about a collection the warehouse has nothing of: the collections it has, as '; the
    warehouse's collections: a, b' (empty if it holds something of this one)."""
    known = collection_ids(con)
    return "" if collection_id in known else f"; the warehouse's collections: {', '.join(known)}"


def replace_judgments(
    con: duckdb.DuckDBPyConnection,
    collection_id: str,
    qrels: str,
    questions: str | None = None,
    documents: str | None = None,
) -> None:
    """Replace an imported collection's judgments, and its questions and documents if given, with the rows of the
    given tables (qrels: question_id, doc_id, relevance; questions: question_id, question_text; documents: doc_id,
    title, doc_text). Only the questions that have judgments are kept: the others are not part of the evaluation.
    Without questions and documents (TREC qrels), the collection's stay as they are."""
    key = [collection_id]
    given = {"qrels": qrels, "questions": questions, "documents": documents}
    for table in (name for name, rows in given.items() if rows):
        con.execute(f"delete from raw.{table} where collection_id = ?", key)
    con.execute(
        f"insert into raw.qrels (collection_id, question_id, doc_id, relevance) "
        f"select ?, question_id, doc_id, relevance from {qrels}",
        key,
    )
    if questions:
        con.execute(
            f"insert into raw.questions (collection_id, question_id, question_text) "
            f"select ?, question_id, question_text from {questions} "
            f"where question_id in (select question_id from {qrels})",
            key,
        )
    if documents:
        con.execute(
            f"insert into raw.documents (collection_id, doc_id, title, doc_text) "
            f"select ?, doc_id, title, doc_text from {documents}",
            key,
        )


def cached_doc_embeddings(
    con: duckdb.DuckDBPyConnection, collection_id: str, model: str, doc_ids: Sequence[str], texts: Sequence[str]
) -> dict[str, list[float]]:
    """The cached embeddings (by doc id) of the docs whose embedded text is unchanged: same sha256, same model."""
    rows = con.execute(
        """
        select d.doc_id, e.embedding
        from (select unnest(?::varchar[]) as doc_id, unnest(?::varchar[]) as doc_text) as d
        join raw.doc_embeddings as e
            on e.collection_id = ? and e.model = ? and e.doc_id = d.doc_id and e.text_sha256 = sha256(d.doc_text)
        """,
        [list(doc_ids), list(texts), collection_id, model],
    ).fetchall()
    return {doc_id: embedding for doc_id, embedding in rows}


def store_doc_embeddings(
    con: duckdb.DuckDBPyConnection,
    collection_id: str,
    model: str,
    doc_ids: Sequence[str],
    texts: Sequence[str],
    embeddings: Sequence[Sequence[float]],
) -> None:
    """Cache the embeddings of these docs' texts, replacing any stale row of the same (collection, doc, model)."""
    con.execute(
        "delete from raw.doc_embeddings where collection_id = ? and model = ? and list_contains(?::varchar[], doc_id)",
        [collection_id, model, list(doc_ids)],
    )
    con.execute(
        """
        insert into raw.doc_embeddings (collection_id, doc_id, model, text_sha256, embedding)
        select ?, doc_id, ?, sha256(doc_text), embedding
        from (
            select unnest(?::varchar[]) as doc_id, unnest(?::varchar[]) as doc_text, unnest(?::float[][]) as embedding
        )
        """,
        [collection_id, model, list(doc_ids), list(texts), [list(e) for e in embeddings]],
    )
