"""The Python API, for notebooks: write a run from rows you already have, then build.

    import retrieval_metrics as rm
    rm.write_run("docent", "my_retriever", rows)   # rows: (question_id, doc_id, score[, latency_ms])
    rm.build()                                     # dbt build, then the serving copy
    rm.connect().sql("select * from run_metrics")  # the marts, read-only, as last published

`rows` is an iterable of tuples, or a table with those columns (a pandas DataFrame, a DuckDB relation, or any
table DuckDB reads from Python: a pyarrow Table; a polars DataFrame, with pyarrow installed). The run goes
through the checks and the ranking rule of the file import (the collection's tie rule: trec_eval's, score
descending as a 32-bit float and ties by doc id descending, unless it is doc_order), in one transaction: a bad
row writes nothing and raises InputError naming the question and the problem.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import duckdb

from retrieval_metrics.raw_tables import Run, check_judged
from retrieval_metrics.scored_runs import LATENCY_COLUMNS, SCORED_COLUMNS, write_scored_run
from retrieval_metrics.warehouse import (
    InputError,
    database_path,
    memory_limit,
    check_built,
    reader_path,
    shown,
    source_line,
    sql_literal,
    transaction,
)
from retrieval_metrics.warehouse import connect as open_database
from retrieval_metrics.writer_queue import DEFAULT_WAIT, queued_writer

COLUMNS = ("question_id", "doc_id", "score")
LATENCY = "latency_ms"


def is_table(rows: object) -> bool:
    """Whether DuckDB can read `rows` as a table by name (a DataFrame, an Arrow table)."""
    return any(hasattr(rows, attribute) for attribute in ("columns", "schema", "arrow"))


def table_columns(rows: Any) -> list[str]:
    columns = getattr(rows, "columns", None)
    if columns is None:
        columns = rows.schema.names
    return [str(column) for column in columns]


def write_run(
    collection_id: str,
    run_id: str,
    rows: Iterable[tuple[Any, ...]] | Any,
    *,
    retriever: str = "python",
    parameters: Mapping[str, object] | None = None,
    ir_metadata: Mapping[str, object] | None = None,
    chunk_rule: str | None = None,
    top_k: int | None = None,
    database: str | Path | None = None,
    wait: float = DEFAULT_WAIT,
) -> int:
    """Write (or replace) run `run_id` of a collection from scored rows; returns the ranking rows written.

    With `chunk_rule` ("maxp" or "sump") the doc ids are chunk ids, `doc#chunk`; with `top_k`, each question
    keeps its first N docs. `retriever` and `parameters` are recorded in raw.runs, and so is `ir_metadata` (the
    run's ir_metadata, as a run file's block would give it; as JSON, a date as its ISO text). A fourth value (or a
    `latency_ms` column) is the time the question's search took, one per question, in milliseconds. Another
    writer of the database (an import, a build) is waited for, up to `wait` seconds."""
    run = Run(collection_id, run_id, retriever, dict(parameters or {}), ir_metadata)
    path = database_path(database)
    with queued_writer(path, f"write_run {run_id}", wait), open_database(path, config={"memory_limit": memory_limit()}) as con:
        if isinstance(rows, duckdb.DuckDBPyRelation):
            rows = rows.df()  # a relation belongs to its own connection: bring its rows over
        if is_table(rows):
            columns = table_columns(rows)
            missing = [name for name in COLUMNS if name not in columns]
            if missing:
                raise InputError(f"rows have no {missing[0]!r} column (they need {', '.join(COLUMNS)})")
            con.register("api_rows", rows)
            scored, params = f"select {', '.join(COLUMNS)} from api_rows", []
            latencies = f"select question_id, {LATENCY} from api_rows" if LATENCY in columns else None
            latency_params: list[object] = []
        else:
            scored, params, latencies, latency_params = from_tuples(rows)
        with transaction(con):
            check_judged(con, collection_id)
            return write_scored_run(
                con,
                run,
                scored,
                params,
                top_k=top_k,
                chunk_rule=chunk_rule,
                latencies=latencies,
                latency_params=latency_params,
            )


def from_tuples(rows: Iterable[tuple[Any, ...]]) -> tuple[str, list[object], str | None, list[object]]:
    """Tuples as the column lists scored_runs unnests: (question_id, doc_id, score[, latency_ms])."""
    columns: list[list[Any]] = [[], [], [], []]
    widths = set()
    for number, row in enumerate(rows, 1):
        if len(row) not in (3, 4):
            raise InputError(f"row {number}: {len(row)} values, not (question_id, doc_id, score[, latency_ms])")
        widths.add(len(row))
        for column, value in zip(columns, row, strict=False):
            column.append(value)
    if len(widths) > 1:
        raise InputError("some rows have a latency and some do not: give it on every row or on none")
    question_ids = [None if q is None else str(q) for q in columns[0]]
    doc_ids = [None if d is None else str(d) for d in columns[1]]
    scored = [question_ids, doc_ids, columns[2]]
    if widths == {4}:
        return SCORED_COLUMNS, scored, LATENCY_COLUMNS, [question_ids, columns[3]]
    return SCORED_COLUMNS, scored, None, []


def build(
    *dbt_args: str, database: str | Path | None = None, wait: float = DEFAULT_WAIT, verbose: bool = False
) -> str:
    """dbt build of the warehouse (with any dbt arguments, e.g. "--select", "source:raw+"), then its serving
    copy; returns the line `retrieval-metrics build` prints. Raises if the build fails; a data test that warned
    (e.g. a question no judgment makes relevant) gets a line on stderr and is counted in the line returned.
    Another writer of the database is waited for, up to `wait` seconds. dbt runs in this process, loaded at the
    first build and kept for the next ones (while the project and its --vars stay the same), as a notebook calls
    it again and again. dbt's own lines go to its log file; `verbose` prints them too."""
    from retrieval_metrics.building import build_database
    from retrieval_metrics.dbt_runner import dbt_lines_shown

    path = database_path(database)
    with queued_writer(path, "build", wait), dbt_lines_shown(verbose):
        return build_database(path, dbt_args, "retrieval_metrics.build")


def remove(
    collection_id: str,
    run_id: str | None = None,
    *,
    judgments: bool = False,
    whole_collection: bool = False,
    database: str | Path | None = None,
    wait: float = DEFAULT_WAIT,
) -> str:
    """Remove one run (`run_id`), the collection's `judgments`, or the `whole_collection`, as
    `retrieval-metrics remove` does; the next rm.build() drops them from the marts. Returns its line."""
    from retrieval_metrics.removal import remove as remove_from

    path = database_path(database)
    with queued_writer(path, f"remove {collection_id}" + (f"/{run_id}" if run_id else ""), wait):
        return remove_from(path, collection_id, run_id, judgments, whole_collection)


def collection_settings(
    collection_id: str, *, database: str | Path | None = None, wait: float = DEFAULT_WAIT, **values: object
) -> str:
    """Show, set or unset a collection's own settings, as `retrieval-metrics settings` does: e.g.
    rm.collection_settings("trec-dl", k_values=[10, 100], baseline_run_id=["bm25", "splade"]); a value of None
    drops the collection's own (the seed's, else the dbt var's, applies again). Returns its line; the next rm.build()
    recomputes that collection only."""
    from retrieval_metrics.per_collection import set_settings

    path = database_path(database)
    given = {name: value for name, value in values.items() if value is not None}
    unset = [name for name, value in values.items() if value is None]
    if not values:
        return set_settings(path, collection_id)
    with queued_writer(path, f"settings {collection_id}", wait):
        return set_settings(path, collection_id, given, unset)


def question_tags(
    collection_id: str,
    tags: Mapping[str, Iterable[str] | str],
    *,
    database: str | Path | None = None,
    wait: float = DEFAULT_WAIT,
) -> str:
    """Replace an imported collection's question tags (the slices run_tag_measures and run_tag_comparisons report
    on), as `retrieval-metrics import --tags` does: {question id: its tags}, e.g. {"q1": ["pricing"]}. Returns
    its line; the next rm.build() recomputes that collection."""
    from retrieval_metrics.tagging import mapping_rows, replace_tags
    from retrieval_metrics.warehouse import SEEDED_COLLECTION, check_identifier

    check_identifier("collection", collection_id)
    if collection_id == SEEDED_COLLECTION:
        raise InputError(f"collection {SEEDED_COLLECTION!r} is the lesson's seeds: its tags live in "
                         "seeds/golden_question_tags.csv")  # fmt: skip
    rows = mapping_rows(tags)
    path = database_path(database)
    with queued_writer(path, f"tags {collection_id}", wait), open_database(path) as con, transaction(con):
        check_judged(con, collection_id)
        written = replace_tags(con, collection_id, rows)
    return f"collection {collection_id}: {written} tags of {len(tags)} questions"


def connect(database: str | Path | None = None) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the marts as last published: the serving copy (or the file `database` names),
    opened afresh, so it shows the latest build even while an earlier connection of this process is still open
    on the copy it replaced. Says in one line (on stderr) which file and which build it reads. A running import or build
    never holds the serving copy, so this never waits."""
    path = reader_path(database)
    if not path.exists():
        raise InputError(f"{shown(path)} does not exist: run `make run` first")
    con = duckdb.connect()  # a new in-memory database: DuckDB's per-file instance cache cannot hand back the old copy
    try:
        con.execute(f"attach {sql_literal(path)} as served (read_only)")
        con.execute("use served")
        check_built(con, path)
    except BaseException:
        con.close()
        raise
    print(f"retrieval_metrics.connect: reading {source_line(con, path)}", file=sys.stderr, flush=True)
    return con
