"""A collection's judging pool: which runs' top K documents people (or a judge) should label next.

`retrieval-metrics pool --collection C (--runs a,b | --all) --depth K [--method depth|rrf|rbp]` records the pool
in raw.judging_pools (replacing the collection's last one), then builds: the judging_queue mart lists every
(question, document) in the pooled runs' top K with no judgment yet, ordered within each question by the method,
and judging_pool_coverage gives each run's Judged@K now and once the queue is judged. docs/judging.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from retrieval_metrics.raw_tables import check_judged
from retrieval_metrics.warehouse import InputError, check_identifier, connect, transaction

METHODS = ("depth", "rrf", "rbp")


@dataclass(frozen=True)
class PoolRequest:
    """The pool of one collection: its runs (None: every run it has now), the depth K and the method."""

    collection_id: str
    run_ids: list[str] | None
    depth: int
    method: str = "depth"

    def check(self) -> None:
        check_identifier("collection", self.collection_id)
        if self.method not in METHODS:
            raise InputError(f"--method {self.method!r}: one of {', '.join(METHODS)}")
        if not 1 <= self.depth <= 2**31 - 1:
            raise InputError(f"--depth {self.depth}: a positive number of documents per question, e.g. --depth 10")
        if self.run_ids is not None:
            if not self.run_ids:
                raise InputError("--runs: name at least one run, e.g. --runs bm25,dense (or --all)")
            repeated = sorted({run for run in self.run_ids if self.run_ids.count(run) > 1})
            if repeated:
                raise InputError(f"--runs names {', '.join(repeated)} more than once")


def parse_runs(text: str) -> list[str]:
    """--runs a,b as its run ids (spaces around the commas ignored)."""
    return [run.strip() for run in text.split(",")]


def record_pool(database: Path, request: PoolRequest) -> list[str]:
    """Replace the collection's pool in raw.judging_pools, in one transaction; the runs pooled. InputError, and
    nothing written, for a collection without runs or judgments, or a run it does not have."""
    request.check()
    if not database.exists():
        raise InputError(f"{database} does not exist: rank or import a run first")
    with connect(database) as con, transaction(con):
        runs = [run for (run,) in con.execute(
            "select run_id from raw.runs where collection_id = ? order by run_id", [request.collection_id]).fetchall()]  # fmt: skip
        if not runs:
            raise InputError(f"collection {request.collection_id!r} has no runs to pool: rank or import one first")
        check_judged(con, request.collection_id)
        chosen = runs if request.run_ids is None else request.run_ids
        unknown = [run for run in chosen if run not in runs]
        if unknown:
            raise InputError(f"collection {request.collection_id!r} has no run {', '.join(map(repr, unknown))} "
                             f"(its runs: {', '.join(runs)})")  # fmt: skip
        con.execute("delete from raw.judging_pools where collection_id = ?", [request.collection_id])
        con.execute(
            "insert into raw.judging_pools select ?, unnest(?::varchar[]), ?, ?",
            [request.collection_id, sorted(chosen), request.depth, request.method],
        )
    return sorted(chosen)


def pool_summary(con: duckdb.DuckDBPyConnection, collection_id: str) -> str:
    """What the built pool asks for, and what judging it would give each run: one line per run after the first."""
    (pairs, questions) = con.execute(
        "select count(*), count(distinct question_id) from main.judging_queue where collection_id = ?",
        [collection_id],
    ).fetchone() or (0, 0)
    coverage = con.execute(
        "select run_id, pool_depth, is_pool_run, judged_now, judged_after, n_unjudged_now "
        "from main.judging_pool_coverage where collection_id = ? order by not is_pool_run, run_id",
        [collection_id],
    ).fetchall()
    depth = coverage[0][1] if coverage else "K"
    lines = [f"{pairs} (question, document) pairs to judge over {questions} questions in judging_queue"]
    for run_id, _, pooled, now, after, unjudged in coverage:
        lines.append(f"  {run_id}{'' if pooled else ' (not pooled)'}: Judged@{depth} {now:.3f} now, "
                     f"{after:.3f} once the queue is judged ({unjudged} unjudged in its top {depth})")  # fmt: skip
    return "\n".join(lines)
