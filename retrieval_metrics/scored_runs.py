"""A run from scored rows (question id, doc id, score): the checks and the ranking rule shared by plug-in
retrievers (plugins), the Python API (api) and fusion (fusion), so that each of them writes a run exactly as
the TREC import would have written the same rows.

- Checks, each refused with one line naming the question and the problem, before anything is written: a
  missing id, a missing or non-finite score, a (question, doc) given twice, and a doc id the collection does
  not have (where the warehouse knows its documents: Docent's seeds, an imported BEIR corpus), and a question
  id the collection does not have (where it knows its questions: Docent's seeds, an imported BEIR folder's).
- Ranking: the collection's tie rule (tie_rules: trec_eval's, score descending as a 32-bit float and ties by doc
  id descending, unless the collection's tie_rule is doc_order), as the import ranks a TREC run file;
  `top_k` keeps each question's first N.
- Chunks: with a chunk rule, each row's id is a chunk, `doc#chunk` (split at the last '#'); the chunk rows are
  kept in raw.chunk_rankings (ranked by the same rule) and the doc's score is its best chunk's (maxp, the
  default) or the sum of its chunks' (sump). The rule is recorded in the run's parameters.
- Latency: one time per question (milliseconds), kept in raw.question_latencies (write_latencies: the built-in
  retrievers' too).

Everything runs in the caller's transaction (warehouse.transaction), through raw_tables.replace_run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import duckdb

from retrieval_metrics import tie_rules
from retrieval_metrics.collections import documents_sql, questions_sql
from retrieval_metrics.raw_tables import Run, replace_run
from retrieval_metrics.warehouse import InputError

# Rows given as Python lists (plug-ins, the API): the parameters are the lists, one per column
SCORED_COLUMNS = (
    "select unnest(?::varchar[]) as question_id, unnest(?::varchar[]) as doc_id, unnest(?::double[]) as score"
)
LATENCY_COLUMNS = "select unnest(?::varchar[]) as question_id, unnest(?::double[]) as latency_ms"
CHUNK_SEPARATOR = "#"
# chunk rule -> a doc's score from its chunks' scores (summed in a fixed order: the same bits on every run)
CHUNK_RULES = {"maxp": "max(score)", "sump": "sum(score order by chunk_id)"}


def check_chunk_rule(rule: str | None) -> None:
    if rule is not None and rule not in CHUNK_RULES:
        raise InputError(f"unknown chunk rule {rule!r} (choose from {', '.join(CHUNK_RULES)})")


def first(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[object] = ()) -> tuple[Any, ...] | None:
    """The first row of a query, or None."""
    return con.execute(sql, list(params)).fetchone()


def collection_doc_ids(con: duckdb.DuckDBPyConnection, collection_id: str) -> str | None:
    """The query of the collection's doc ids (column doc_id) if it has documents, else None: a collection
    without a corpus (TREC qrels and runs only) ranks documents nobody listed, and the build's test of rankings
    against documents (composite_relationships within collection_id) leaves it out too. Docent's documents are
    the seed file the next build loads; an imported collection's are raw.documents, as this transaction sees
    them (retrieval_metrics.collections)."""
    query = f"select doc_id from ({documents_sql(collection_id)})"
    return query if first(con, f"{query} limit 1") else None


def check_rows(con: duckdb.DuckDBPyConnection, what: str = "doc") -> None:
    """The checks over temp table scored_in (question_id, doc_id, score); InputError on the first problem."""
    found = first(con, "select doc_id from scored_in where question_id is null limit 1")
    if found:
        raise InputError(f"a row has no question id ({what} {found[0]!r})")
    found = first(con, "select question_id from scored_in where doc_id is null order by question_id limit 1")
    if found:
        raise InputError(f"question {found[0]!r}: a row has no {what} id")
    found = first(
        con,
        "select question_id, doc_id, score from scored_in where score is null or not isfinite(score) "
        "order by question_id, doc_id limit 1",
    )
    if found:
        problem = "no score" if found[2] is None else f"a non-finite score ({found[2]})"
        raise InputError(f"question {found[0]!r}: {what} {found[1]!r} has {problem}")
    found = first(
        con,
        "select question_id, doc_id, count(*) from scored_in group by question_id, doc_id having count(*) > 1 "
        "order by question_id, doc_id limit 1",
    )
    if found:
        raise InputError(f"question {found[0]!r}: {what} {found[1]!r} is given {found[2]} times")


def check_known_docs(con: duckdb.DuckDBPyConnection, collection_id: str, table: str = "scored_in") -> None:
    """InputError for the first doc id of the temp table that the collection does not have (if it is known)."""
    known = collection_doc_ids(con, collection_id)
    if known is None:
        return
    found = first(
        con,
        f"select question_id, doc_id from {table} as given "
        f"where not exists (select 1 from ({known}) as docs where docs.doc_id = given.doc_id) "
        "order by question_id, doc_id limit 1",
    )
    if found:
        raise InputError(f"question {found[0]!r}: unknown doc id {found[1]!r} (not a document of {collection_id!r})")


def collection_question_ids(con: duckdb.DuckDBPyConnection, collection_id: str) -> str | None:
    """The query of the collection's question ids (column question_id) if it knows its questions, else None: a
    collection without them (TREC qrels and runs only) measures the questions its judgments name, as trec_eval
    does. Docent's questions are the seed file the next build loads; an imported collection's are raw.questions,
    as this transaction sees them (retrieval_metrics.collections)."""
    query = f"select question_id from ({questions_sql(collection_id)})"
    return query if first(con, f"{query} limit 1") else None


def unknown_question(
    con: duckdb.DuckDBPyConnection,
    collection_id: str,
    rows: str,
    params: Sequence[object] = (),
    order: str = "question_id, doc_id",
) -> tuple[Any, ...] | None:
    """The first row (in `order`) of the query `rows` whose question_id the collection does not know, if it knows
    its questions: one anti-join."""
    known = collection_question_ids(con, collection_id)
    if known is None:
        return None
    return first(
        con,
        f"select * from ({rows}) as given "
        f"where not exists (select 1 from ({known}) as questions where questions.question_id = given.question_id) "
        f"order by {order} limit 1",
        params,
    )


def check_known_questions(con: duckdb.DuckDBPyConnection, collection_id: str, table: str = "scored_in") -> None:
    """InputError for the first row of the temp table (question_id, doc_id, score) whose question the collection
    does not have, if it knows its questions: the measures would leave that question out without a word."""
    found = unknown_question(con, collection_id, f"select question_id, doc_id, score from {table}")
    if found:
        question_id, doc_id, score = found
        raise InputError(f"question {question_id!r} is not a question of collection {collection_id!r} "
                         f"(the row {question_id!r}, {doc_id!r}, {score!r})")  # fmt: skip


def write_latencies(con: duckdb.DuckDBPyConnection, run: Run, latencies: str, params: Sequence[object]) -> None:
    """raw.question_latencies of the run from a query of (question_id, latency_ms): one finite, non-negative
    time per question."""
    con.execute(
        f"create or replace temp table latency_in as "
        f"select cast(question_id as varchar) as question_id, cast(latency_ms as double) as latency_ms "
        f"from ({latencies}) as latency_rows",
        list(params),
    )
    found = first(
        con,
        "select question_id, latency_ms from latency_in "
        "where latency_ms is null or not isfinite(latency_ms) or latency_ms < 0 order by question_id limit 1",
    )
    if found:
        raise InputError(f"question {found[0]!r}: latency {found[1]} ms is not a finite time >= 0")
    found = first(
        con,
        "select question_id from latency_in group by question_id having count(distinct latency_ms) > 1 "
        "order by question_id limit 1",
    )
    if found:
        raise InputError(f"question {found[0]!r}: more than one latency given")
    con.execute(
        "insert into raw.question_latencies (collection_id, run_id, question_id, latency_ms) "
        "select distinct ?, ?, question_id, latency_ms from latency_in where question_id is not null",
        [run.collection_id, run.run_id],
    )


def write_scored_run(
    con: duckdb.DuckDBPyConnection,
    run: Run,
    rows: str,
    params: Sequence[object] = (),
    *,
    top_k: int | None = None,
    chunk_rule: str | None = None,
    latencies: str | None = None,
    latency_params: Sequence[object] = (),
    check_docs: bool = True,
    check_questions: bool = True,
) -> int:
    """Check, rank and write a run from the query `rows` (with `params`) of question_id, doc_id, score, in the
    caller's transaction; with `latencies`, a query of (question_id, latency_ms). Returns the ranking rows
    written. With `chunk_rule`, doc_id holds chunk ids (`doc#chunk`). `check_docs=False` skips the check of
    doc ids against the collection's documents (fusion: its inputs are runs already written);
    `check_questions=False` that of question ids against its questions (the import checks them itself, naming
    the line)."""
    check_chunk_rule(chunk_rule)
    if top_k is not None and top_k < 1:
        raise InputError(f"top k must be at least 1, not {top_k}")
    try:
        con.execute(
            "create or replace temp table scored_in as select cast(question_id as varchar) as question_id, "
            f"cast(doc_id as varchar) as doc_id, cast(score as double) as score from ({rows}) as given_rows",
            list(params),
        )
    except duckdb.ConversionException as exc:
        raise InputError(f"a score is not a number: {str(exc).splitlines()[0]}") from None
    if chunk_rule:
        check_rows(con, "chunk")
        found = first(
            con,
            f"select question_id, doc_id from scored_in where strpos(doc_id, '{CHUNK_SEPARATOR}') <= 1 "
            "order by question_id, doc_id limit 1",
        )
        if found:
            raise InputError(f"question {found[0]!r}: chunk id {found[1]!r} is not doc{CHUNK_SEPARATOR}chunk")
        con.execute(
            "create or replace temp table chunks_in as select question_id, doc_id as chunk_id, "
            f"regexp_extract(doc_id, '^(.*){CHUNK_SEPARATOR}', 1) as doc_id, score from scored_in"
        )
        if check_questions:
            check_known_questions(con, run.collection_id)
        if check_docs:
            check_known_docs(con, run.collection_id, "chunks_in")
        con.execute(
            "create or replace temp table scored_in as select question_id, doc_id, "
            f"{CHUNK_RULES[chunk_rule]} as score from chunks_in group by question_id, doc_id"
        )
        run = dataclasses.replace(run, parameters={**run.parameters, "chunk_rule": chunk_rule})
    else:
        check_rows(con)
        if check_questions:
            check_known_questions(con, run.collection_id)
        if check_docs:
            check_known_docs(con, run.collection_id)
    kept = f"where rank <= {int(top_k)}" if top_k is not None else ""
    ranked = tie_rules.ranked_rows(con, run.collection_id, "select * from scored_in")
    written = replace_run(con, run, f"select * from ({ranked}) {kept}")
    if chunk_rule:
        rule = tie_rules.collection_tie_rule(con, run.collection_id)
        chunk_order = f"partition by question_id order by {tie_rules.order_by(rule, 'chunk_id')}"
        con.execute(
            "insert into raw.chunk_rankings (collection_id, run_id, question_id, chunk_id, doc_id, rank, score) "
            f"select ?, ?, question_id, chunk_id, doc_id, cast(row_number() over ({chunk_order}) as integer), "
            f"score from ({tie_rules.with_positions(rule, run.collection_id, 'select * from chunks_in')})",
            [run.collection_id, run.run_id],
        )
    if latencies is not None:
        write_latencies(con, run, latencies, latency_params)
    return written
