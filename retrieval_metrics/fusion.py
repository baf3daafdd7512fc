"""Fusion: a new run of a collection from two or more of its runs, written as an ordinary run (every mart, test
and the gate treat it like any other), with its inputs and parameters recorded in raw.runs.

For a question, each input run contributes to a doc's fused score only if it retrieved the doc:

- rrf (reciprocal rank fusion, Cormack et al. 2009): sum over the runs of 1 / (k + rank), k = 60 by default,
  rank as the warehouse holds it (by the collection's tie rule);
- combsum (Fox and Shaw 1993): sum over the runs of the min-max normalised score, (score - min) / (max - min)
  over the run's docs for that question (max - min floored at 1e-9, as ranx does: a run whose docs all tie
  contributes 0 to each);
- combmnz: combsum times the number of runs that retrieved the doc.

These are ranx's `fuse` (norm="min-max" for combsum and combmnz, rrf on the runs' ranks), checked against it in
tests/python/test_fusion.py. The questions are those of any input run. The fused run is then ranked by the
rule every run of the collection follows (its tie rule, scored_runs: trec_eval's by default).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from retrieval_metrics.raw_tables import Run
from retrieval_metrics.scored_runs import write_scored_run
from retrieval_metrics.warehouse import InputError, check_identifier, connect, memory_limit, transaction

METHODS = ("rrf", "combsum", "combmnz")
RRF_K = 60
MIN_MAX_FLOOR = 1e-9  # ranx's floor of max - min


def fused_scores(method: str, rrf_k: float) -> str:
    """The fused (question_id, doc_id, score) over temp table fusion_in (input, question_id, doc_id, rank, score)."""
    if method == "rrf":
        contribution = f"1.0 / ({float(rrf_k)!r} + rank)"
    else:
        contribution = (
            "(score - min(score) over per_question) / "
            f"greatest(max(score) over per_question - min(score) over per_question, {MIN_MAX_FLOOR!r})"
        )
    # Sums in a fixed order (by input run), so the same inputs give the same bits on every run
    total = "sum(contribution order by input)"
    fused = f"{total} * count(*)" if method == "combmnz" else total
    return f"""
        with contributions as (
            select input, question_id, doc_id, {contribution} as contribution
            from fusion_in
            window per_question as (partition by input, question_id)
        )
        select question_id, doc_id, {fused} as score
        from contributions
        group by question_id, doc_id
    """


def fuse(
    database: Path,
    collection_id: str,
    run_ids: Sequence[str],
    method: str,
    run_id: str,
    rrf_k: float = RRF_K,
    top_k: int | None = None,
) -> str:
    """Write the fused run; one line saying what was written."""
    check_identifier("collection", collection_id)
    check_identifier("run id", run_id)
    if method not in METHODS:
        raise InputError(f"unknown fusion method {method!r} (choose from {', '.join(METHODS)})")
    if len(run_ids) < 2 or len(set(run_ids)) != len(run_ids):
        raise InputError(f"fusion needs two or more different runs, not {', '.join(run_ids) or 'none'}")
    if run_id in run_ids:
        raise InputError(f"the fused run {run_id!r} would replace one of its inputs: give another --run-id")
    if not (math.isfinite(rrf_k) and rrf_k > 0):  # checked whatever the method: SQL never sees inf or nan
        raise InputError(f"--rrf-k must be a positive finite number, not {rrf_k:g}")
    if top_k is not None and top_k < 1:
        raise InputError(f"--top-k must be at least 1, not {top_k}")
    for input_id in run_ids:
        check_identifier("run id", input_id)
    with connect(database, config={"memory_limit": memory_limit()}) as con, transaction(con):
        versions = dict(
            con.execute(
                "select run_id, coalesce(run_version, '') from raw.runs "
                "where collection_id = ? and list_contains(?::varchar[], run_id)",
                [collection_id, list(run_ids)],
            ).fetchall()
        )
        missing = [input_id for input_id in run_ids if input_id not in versions]
        if missing:
            raise InputError(f"collection {collection_id!r} has no run {missing[0]!r} to fuse")
        con.execute(
            "create or replace temp table fusion_in as "
            "select list_position(?::varchar[], run_id) as input, question_id, doc_id, rank, score "
            "from raw.rankings where collection_id = ? and list_contains(?::varchar[], run_id)",
            [list(run_ids), collection_id, list(run_ids)],
        )
        if method != "rrf":
            found = con.execute(
                "select list_extract(?::varchar[], input), question_id from fusion_in where score is null limit 1",
                [list(run_ids)],
            ).fetchone()
            if found:
                raise InputError(f"run {found[0]!r}, question {found[1]!r}: a doc has no score ({method} needs scores)")
        parameters: dict[str, object] = {
            "method": method,
            "runs": list(run_ids),
            "run_versions": [versions[input_id] for input_id in run_ids],
        }
        if method == "rrf":
            parameters["k"] = rrf_k
        if top_k is not None:
            parameters["top_k"] = top_k
        run = Run(collection_id, run_id, f"fusion:{method}", parameters)
        written = write_scored_run(con, run, fused_scores(method, rrf_k), top_k=top_k, check_docs=False)
    return f"wrote run {collection_id}/{run_id}: {written} ranked docs, {method} of {', '.join(run_ids)}"
