"""pytrec_eval as the reference: trec_eval's own code run on the same qrels and run, and the one loop that
compares it with the warehouse's question_metrics and run_metrics."""

from __future__ import annotations

import duckdb
import pytest
import pytrec_eval

# our question_metrics column -> trec_eval measure (k-dependent ones take the cutoff as suffix)
AT_K = {"precision": "P", "recall": "recall", "ndcg": "ndcg_cut", "hit": "success"}
WHOLE_RANKING = {"reciprocal_rank": "recip_rank", "average_precision": "map", "r_precision": "Rprec"}
MEASURES = [*AT_K, *WHOLE_RANKING]
# the same measures' means in run_metrics, in MEASURES order
RUN_COLUMNS = ["precision", "recall", "ndcg", "hit_rate", "mrr", "map", "r_precision"]

Qrels = dict[str, dict[str, int]]
TrecRun = dict[str, dict[str, float]]


def trec_eval_per_question(qrels: Qrels, run: TrecRun, ks: list[int]) -> dict[str, dict[str, float]]:
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


def key(measure: str, k: int) -> str:
    return f"{measure}@{k}" if measure in AT_K else measure


def assert_matches_trec_eval(
    con: duckdb.DuckDBPyConnection,
    collection_id: str,
    run_id: str,
    qrels: Qrels,
    run: TrecRun,
    ks: list[int],
    averaging: str = "all_questions",
    tolerance: float = 1e-9,
) -> int:
    """Every per-question value and every mean of one run equals pytrec_eval's on (qrels, run); returns how
    many values were compared.

    trec_eval evaluates only the questions in both the qrels and the run; any other question of ours must
    score 0 (trec_eval -c). The means are over the questions question_metrics marks is_averaged: all of them
    (all_questions, trec_eval -c) or exactly those trec_eval evaluated (retrieved_only, its default).
    """
    reference = trec_eval_per_question(qrels, run, ks)
    rows = con.execute(
        f"select question_id, k, is_averaged, {', '.join(MEASURES)} from question_metrics "
        "where collection_id = ? and run_id = ?",
        [collection_id, run_id],
    ).fetchall()
    assert rows, (collection_id, run_id)
    checked = 0
    for question_id, k, is_averaged, *values in rows:
        assert is_averaged == (averaging == "all_questions" or question_id in reference), question_id
        for measure, value in zip(MEASURES, values, strict=True):
            expected = reference.get(question_id, {}).get(key(measure, k), 0.0)
            assert value == pytest.approx(expected, abs=tolerance), (collection_id, run_id, question_id, key(measure, k))
            checked += 1
    averaged = {question_id for question_id, _, is_averaged, *_ in rows if is_averaged}
    if averaging == "retrieved_only":
        assert averaged == set(reference)
    means = con.execute(
        f"select k, n_questions, {', '.join(RUN_COLUMNS)} from run_metrics "
        "where collection_id = ? and run_id = ? order by k",
        [collection_id, run_id],
    ).fetchall()
    assert [row[0] for row in means] == sorted(ks)
    for k, n_questions, *values in means:
        assert n_questions == len(averaged)
        for measure, value in zip(MEASURES, values, strict=True):
            total = sum(reference[q][key(measure, k)] for q in averaged if q in reference)
            assert value == pytest.approx(total / len(averaged), abs=tolerance), (collection_id, run_id, key(measure, k))
            checked += 1
    return checked


def warehouse_inputs(con: duckdb.DuckDBPyConnection, collection_id: str, run_id: str) -> tuple[Qrels, TrecRun]:
    """The collection's seeded qrels and the run, as pytrec_eval dicts. The score handed to trec_eval is -rank,
    so trec_eval's own ordering (score descending) is exactly the warehouse's rank."""
    qrels: Qrels = {}
    for question_id, doc_id, relevance in con.execute(
        "select question_id, doc_id, relevance from staging.stg_seeds__golden_qrels where collection_id = ?",
        [collection_id],
    ).fetchall():
        qrels.setdefault(question_id, {})[doc_id] = relevance
    run: TrecRun = {}
    for question_id, doc_id, rank in con.execute(
        "select question_id, doc_id, rank from raw.rankings where collection_id = ? and run_id = ?",
        [collection_id, run_id],
    ).fetchall():
        run.setdefault(question_id, {})[doc_id] = -float(rank)
    return qrels, run
