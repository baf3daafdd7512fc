"""Removing what was imported: a run, a collection's judgments, or a whole collection, from the raw tables, in
one transaction, with the removal recorded in raw.removals (what, when). The next build drops the removed runs'
rows from every per-run model and mart, and so from the serving copy.

    retrieval-metrics remove --collection C --run-id R       # one run: its rankings, chunks and latencies
    retrieval-metrics remove --collection C --judgments      # its judgments (once it has no runs)
    retrieval-metrics remove --collection C --all --yes      # everything of the collection
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from retrieval_metrics.raw_tables import elsewhere
from retrieval_metrics.warehouse import SEEDED_COLLECTION, InputError, check_identifier, connect, transaction

RUN_TABLES = ("rankings", "chunk_rankings", "question_latencies", "judging_pools", "runs")
COLLECTION_TABLES = ("qrels", "judgments", "judgment_versions", "questions", "documents", "doc_embeddings",
                     "collection_settings", "question_tags")  # fmt: skip
REMOVALS_DDL = """
create table if not exists raw.removals (
    collection_id varchar not null,
    run_id varchar,
    removed varchar not null,
    removed_at timestamp not null
)
"""


def remove(database: Path, collection_id: str, run_id: str | None = None, judgments: bool = False,
           everything: bool = False) -> str:  # fmt: skip
    """Remove one run, the judgments, or everything of a collection; one line saying what was removed.
    InputError (nothing removed) for a run or collection the warehouse does not have, judgments that runs
    still need, or Docent's seeds."""
    check_identifier("collection", collection_id)
    if sum([run_id is not None, judgments, everything]) != 1:
        raise InputError("say what to remove: --run-id R, --judgments or --all")
    if not database.exists():
        raise InputError(f"{database} does not exist: nothing to remove")
    with connect(database) as con, transaction(con):
        con.execute(REMOVALS_DDL)
        runs = [r for (r,) in con.execute(
            "select run_id from raw.runs where collection_id = ? order by run_id", [collection_id]).fetchall()]  # fmt: skip
        if run_id is not None:
            check_identifier("run id", run_id)
            if run_id not in runs:
                raise InputError(f"collection {collection_id!r} has no run {run_id!r} (its runs: "
                                 f"{', '.join(runs) or 'none'})")  # fmt: skip
            rows = delete(con, RUN_TABLES, "collection_id = ? and run_id = ?", [collection_id, run_id])
            record(con, collection_id, run_id, "run")
            return f"removed run {collection_id}/{run_id} ({rows} rows); the next build drops it from the marts"
        if collection_id == SEEDED_COLLECTION and judgments:
            raise InputError(f"{SEEDED_COLLECTION}'s judgments are the seeds (seeds/golden_qrels.csv): edit them there")
        if judgments:
            if runs:
                raise InputError(f"collection {collection_id!r} still has runs that are scored against its judgments "
                                 f"({', '.join(runs)}): remove them first, or the whole collection with --all")  # fmt: skip
            rows = delete(con, ("qrels", "judgments", "judgment_versions"), "collection_id = ?", [collection_id])
            if not rows:
                raise InputError(f"collection {collection_id!r} has no judgments to remove")
            # the tags of questions known only from the judgments go with them
            con.execute("delete from raw.question_tags as tagged where collection_id = $c and not exists "
                        "(select 1 from raw.questions as known where known.collection_id = $c "
                        "and known.question_id = tagged.question_id)", {"c": collection_id})  # fmt: skip
            record(con, collection_id, None, "judgments")
            return f"removed the judgments of {collection_id} ({rows} rows)"
        tables = RUN_TABLES if collection_id == SEEDED_COLLECTION else (*RUN_TABLES, *COLLECTION_TABLES)
        rows = delete(con, tables, "collection_id = ?", [collection_id])
        if not rows:
            raise InputError(f"the warehouse has no collection {collection_id!r}{elsewhere(con, collection_id)}")
        record(con, collection_id, None, "runs" if collection_id == SEEDED_COLLECTION else "collection")
        kept = f" ({SEEDED_COLLECTION}'s seeds stay)" if collection_id == SEEDED_COLLECTION else ""
        return (f"removed collection {collection_id}{kept}: {len(runs)} runs, {rows} rows; the next build drops "
                "it from the marts")  # fmt: skip


def delete(con: duckdb.DuckDBPyConnection, tables: tuple[str, ...], where: str, params: list[object]) -> int:
    """Delete the matching rows of each raw table; how many rows in all."""
    total = 0
    for table in tables:
        (count,) = con.execute(f"delete from raw.{table} where {where}", params).fetchone() or (0,)
        total += int(count)
    return total


def record(con: duckdb.DuckDBPyConnection, collection_id: str, run_id: str | None, removed: str) -> None:
    con.execute(
        "insert into raw.removals values (?, ?, ?, cast(now() at time zone 'UTC' as timestamp))",
        [collection_id, run_id, removed],
    )
