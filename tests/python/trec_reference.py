"""pytrec_eval as the reference: evaluate the warehouse's own rankings and qrels with trec_eval's code."""

from __future__ import annotations

import pytrec_eval

# our question_metrics column -> trec_eval measure (k-dependent ones take the cutoff as suffix)
AT_K = {"precision": "P", "recall": "recall", "ndcg": "ndcg_cut", "hit": "success"}
WHOLE_RANKING = {"reciprocal_rank": "recip_rank", "average_precision": "map", "r_precision": "Rprec"}


def trec_eval_per_question(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], ks: list[int]
) -> dict[str, dict[str, float]]:
    """pytrec_eval's per-question values, renamed to our columns with the cutoff: {'q': {'ndcg@2': ...}}."""
    cutoffs = ",".join(str(k) for k in ks)
    measures = {f"{name}.{cutoffs}" for name in AT_K.values()} | set(WHOLE_RANKING.values())
    evaluated = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    renamed: dict[str, dict[str, float]] = {}
    for question_id, values in evaluated.items():
        row = {f"{ours}@{k}": values[f"{theirs}_{k}"] for ours, theirs in AT_K.items() for k in ks}
        row.update({ours: values[theirs] for ours, theirs in WHOLE_RANKING.items()})
        renamed[question_id] = row
    return renamed


def warehouse_inputs(con, collection_id: str, run_id: str) -> tuple[dict, dict]:
    """The collection's qrels and the run, as pytrec_eval dicts. The score handed to trec_eval is -rank, so
    trec_eval's own ordering (score descending) is exactly the warehouse's rank."""
    qrels: dict[str, dict[str, int]] = {}
    for question_id, doc_id, relevance in con.execute(
        "select question_id, doc_id, relevance from staging.stg_seeds__golden_qrels where collection_id = ?",
        [collection_id],
    ).fetchall():
        qrels.setdefault(question_id, {})[doc_id] = relevance
    run: dict[str, dict[str, float]] = {}
    for question_id, doc_id, rank in con.execute(
        "select question_id, doc_id, rank from raw.rankings where collection_id = ? and run_id = ?",
        [collection_id, run_id],
    ).fetchall():
        run.setdefault(question_id, {})[doc_id] = -float(rank)
    return qrels, run
