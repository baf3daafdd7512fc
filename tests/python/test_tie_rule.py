"""One tie rule per collection, whoever ranks (retrieval_metrics/tie_rules.py).

A small BEIR collection of our own whose documents tie under bm25 (the same text under several ids, the corpus
in neither id order): the built-in bm25's numbers equal pytrec_eval's on bm25's own scores and those of the same
scores exported as a TREC run and imported again; --top-k cuts after the rule; changing the collection's
tie_rule re-ranks its runs from their scores (and back). Docent keeps doc_order: the lesson's numbers, and a
run written through rm.write_run ranks its ties in the seed order too. Built-in runs record a search time per
question.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from conftest import Warehouse
from retrieval_metrics import api as rm
from retrieval_metrics.tie_rules import DOC_ORDER, TREC_EVAL, Ties
from trec_reference import trec_order, warehouse_rankings

COLLECTION = "ties"
# corpus.jsonl in this order: neither doc id ascending (doc_order here) nor descending (trec_eval's)
CORPUS = [
    ("d3", "Refund policy for annual plans"),
    ("d9", "Reset your password from the sign-in page"),
    ("d1", "Refund policy for annual plans"),
    ("d5", "API rate limits and quotas"),
    ("d2", "Reset your password from the sign-in page"),
    ("d10", "Refund policy for annual plans"),
    ("d8", "Change the billing address on invoices"),
    ("d4", "API rate limits and quotas"),
    ("d6", "Export your data as a CSV file"),
    ("d7", "Delete your account and its data permanently"),
]
QUERIES = {
    "q1": "refund for annual plans",  # d1, d10, d3 tie
    "q2": "reset password",  # d2, d9 tie
    "q3": "api rate limits",  # d4, d5 tie
    "q4": "delete account data",  # d7, then d6; the judged d8 among the zero scores
}
QRELS = {"q1": {"d1": 2, "d3": 1}, "q2": {"d2": 1}, "q3": {"d5": 1, "d8": 0}, "q4": {"d7": 1, "d8": 2}}
MEASURES = ("ndcg_cut_10", "recip_rank", "map", "P_5")


def write_beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": doc_id, "title": "", "text": text}) + "\n" for doc_id, text in CORPUS)
    )
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items()))
    lines = [f"{q}\t{d}\t{grade}\n" for q, judged in QRELS.items() for d, grade in judged.items()]
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(lines))
    return folder


def ok(result) -> str:  # noqa: ANN001 - a CompletedProcess
    assert result.returncode == 0, result.stdout + result.stderr
    return str(result.stdout)


def scores_of(warehouse: Warehouse, run_id: str) -> dict[str, dict[str, float]]:
    """A run's stored scores, as pytrec_eval takes a run."""
    run: dict[str, dict[str, float]] = {}
    for question_id, doc_id, score in warehouse.rows(
        "select question_id, doc_id, score from raw.rankings where collection_id = ? and run_id = ?",
        [COLLECTION, run_id],
    ):
        run.setdefault(str(question_id), {})[str(doc_id)] = float(score)  # type: ignore[arg-type]
    return run


def measured(warehouse: Warehouse, run_id: str) -> dict[str, dict[str, float]]:
    """question_measures of a run: question -> measure_name -> value, for MEASURES."""
    found: dict[str, dict[str, float]] = {}
    for question_id, measure_name, value in warehouse.rows(
        "select question_id, measure_name, value from question_measures where collection_id = ? and run_id = ? "
        "and list_contains(?::varchar[], measure_name)",
        [COLLECTION, run_id, list(MEASURES)],
    ):
        found.setdefault(str(question_id), {})[str(measure_name)] = float(value)  # type: ignore[arg-type]
    return found


def doc_order(run: dict[str, dict[str, float]]) -> dict[str, list[str]]:
    """Each question's ranking by doc_order on an imported collection: score descending, doc id ascending."""
    return {q: sorted(scores, key=lambda d: (-scores[d], d)) for q, scores in run.items()}


def as_run(rankings: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """Rankings as a pytrec_eval run whose order is theirs: score -rank."""
    return {q: {d: -float(rank) for rank, d in enumerate(docs, 1)} for q, docs in rankings.items()}


def test_ties_in_numpy_follow_the_rule_as_sql_does() -> None:
    doc_ids = ["b", "a", "c", "ab"]
    scores = np.array([1.0, 1.0, 0.5, 1.0 + 1e-9])  # 1 + 1e-9 is 1 as a 32-bit float
    assert [doc_ids[i] for i in Ties.of(TREC_EVAL, doc_ids).best(scores)] == ["b", "ab", "a", "c"]
    assert [doc_ids[i] for i in Ties.of(DOC_ORDER, doc_ids).best(scores)] == ["ab", "b", "a", "c"]
    assert [doc_ids[i] for i in Ties.of(TREC_EVAL, doc_ids).best(scores, 2)] == ["b", "ab"]


@pytest.mark.dbt
def test_builtin_bm25_equals_pytrec_eval_and_the_same_scores_imported(warehouse: Warehouse, tmp_path: Path) -> None:
    ok(warehouse.cli("import", "--collection", COLLECTION, "--beir", str(write_beir(tmp_path / "beir"))))
    ok(warehouse.cli("settings", "--collection", COLLECTION, "--set", "k_values=2,5,10"))
    ok(warehouse.rank("--collection", COLLECTION, "--retriever", "bm25"))
    ok(warehouse.rank("--collection", COLLECTION, "--retriever", "bm25", "--top-k", "2", "--run-id", "bm25_top2"))
    scores = scores_of(warehouse, "bm25")
    tied = {q: len(s.values()) - len(set(s.values())) for q, s in scores.items()}
    assert all(tied[q] >= 1 for q in QUERIES), tied  # every question has tied scores
    assert trec_order(scores) != doc_order(scores)  # ... which the two rules order differently

    # bm25's own scores as a TREC run file, lines in corpus order and the rank column backwards (both ignored)
    position = {doc_id: i for i, (doc_id, _) in enumerate(CORPUS)}
    lines = [
        f"{q} Q0 {d} {len(s) - position[d]} {s[d]!r} exported\n"
        for q, s in sorted(scores.items())
        for d in sorted(s, key=position.__getitem__)
    ]
    (tmp_path / "bm25.run").write_text("".join(lines))
    run_file = str(tmp_path / "bm25.run")
    ok(warehouse.cli("import", "--collection", COLLECTION, "--run", run_file, "--run-id", "reimported"))
    assert scores_of(warehouse, "reimported") == scores

    # every writer ranked by trec_eval's rule, --top-k cutting after it
    expected = trec_order(scores)
    assert warehouse_rankings(warehouse.connect(), COLLECTION, "bm25") == expected
    assert warehouse_rankings(warehouse.connect(), COLLECTION, "reimported") == expected
    assert warehouse_rankings(warehouse.connect(), COLLECTION, "bm25_top2") == {q: r[:2] for q, r in expected.items()}

    warehouse.built()
    reference = pytrec_eval.RelevanceEvaluator(QRELS, set(MEASURES)).evaluate(scores)
    builtin, reimported = measured(warehouse, "bm25"), measured(warehouse, "reimported")
    assert set(builtin) == set(reference) == set(QUERIES)
    for question_id, values in reference.items():
        for measure in MEASURES:
            assert builtin[question_id][measure] == pytest.approx(values[measure], abs=1e-12), (question_id, measure)
            assert reimported[question_id][measure] == pytest.approx(values[measure], abs=1e-12), (question_id, measure)
    # the ties matter: ranked in document order, the same scores give other numbers
    in_doc_order = pytrec_eval.RelevanceEvaluator(QRELS, {"ndcg_cut_10"}).evaluate(as_run(doc_order(scores)))
    assert any(abs(in_doc_order[q]["ndcg_cut_10"] - reference[q]["ndcg_cut_10"]) > 1e-3 for q in QUERIES)

    # built-in runs record a search time per question: the leaderboard's latency columns are filled
    latencies = warehouse.rows("select question_id, latency_ms from raw.question_latencies where run_id = 'bm25'")
    assert sorted(str(q) for q, _ in latencies) == sorted(QUERIES)
    assert all(float(ms) >= 0 for _, ms in latencies)  # type: ignore[arg-type]
    assert warehouse.rows("select count(*) from run_leaderboard where collection_id = ? and run_id = 'bm25' "
                          "and latency_p95_ms is null", [COLLECTION]) == [(0,)]  # fmt: skip


@pytest.mark.dbt
def test_changing_the_tie_rule_reranks_the_runs_from_their_scores(warehouse: Warehouse, tmp_path: Path) -> None:
    ok(warehouse.cli("import", "--collection", COLLECTION, "--beir", str(write_beir(tmp_path / "beir"))))
    ok(warehouse.rank("--collection", COLLECTION, "--retriever", "bm25"))
    rm.write_run(COLLECTION, "api", [(q, d, s) for q, r in scores_of(warehouse, "bm25").items() for d, s in r.items()],
                 database=warehouse.db_path)  # fmt: skip
    scores = scores_of(warehouse, "bm25")
    before = {run_id: warehouse_rankings(warehouse.connect(), COLLECTION, run_id) for run_id in ("bm25", "api")}
    assert before == {"bm25": trec_order(scores), "api": trec_order(scores)}

    out = ok(warehouse.cli("settings", "--collection", COLLECTION, "--set", "tie_rule=doc_order"))
    assert "tie_rule doc_order (set here)" in out and f"re-ranked 2 run(s) of {COLLECTION}" in out, out
    for run_id in ("bm25", "api"):
        assert warehouse_rankings(warehouse.connect(), COLLECTION, run_id) == doc_order(scores), run_id
    # a writer now ranks by doc_order too
    ok(warehouse.rank("--collection", COLLECTION, "--retriever", "bm25", "--run-id", "again"))
    assert warehouse_rankings(warehouse.connect(), COLLECTION, "again") == doc_order(scores)

    out = ok(warehouse.cli("settings", "--collection", COLLECTION, "--unset", "tie_rule"))
    assert "tie_rule trec_eval (the default)" in out and f"re-ranked 3 run(s) of {COLLECTION}" in out, out
    assert {run_id: warehouse_rankings(warehouse.connect(), COLLECTION, run_id) for run_id in ("bm25", "api")} == before


@pytest.mark.dbt
def test_doc_order_needs_documents(warehouse: Warehouse, tmp_path: Path) -> None:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    ok(warehouse.cli("import", "--collection", "bare", "--qrels", str(tmp_path / "qrels.txt")))
    result = warehouse.cli("settings", "--collection", "bare", "--set", "tie_rule=doc_order")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "retrieval-metrics settings: error: collection 'bare': setting tie_rule: doc_order needs the collection's "
        "documents, and it has none (trec_eval ranks ties by doc id)"
    ]
    assert warehouse.rows("select count(*) from raw.collection_settings where setting = 'tie_rule'") == [(0,)]
    result = warehouse.cli("settings", "--collection", "bare", "--set", "tie_rule=random")
    assert result.returncode == 2 and "setting tie_rule: 'random' is not one of trec_eval, doc_order" in result.stderr


@pytest.mark.dbt
def test_docent_keeps_doc_order(lesson: Warehouse, tmp_path: Path) -> None:
    out = ok(lesson.cli("settings", "--collection", "docent"))
    assert "tie_rule doc_order (the seed's)" in out, out
    got = dict(lesson.rows(
        "select k, [round(recall, 3), round(precision, 3), round(mrr, 3), round(ndcg, 3)] from run_metrics "
        "where collection_id = 'docent' and run_id = 'keyword_overlap'"))  # fmt: skip
    assert got[2] == [0.889, 0.444, 0.8, 0.807]
    assert lesson.rows("select rank from raw.rankings where run_id = 'keyword_overlap' "
                       "and question_id = 'free_plan_cost' and doc_id = 'plans'") == [(5,)]  # fmt: skip
    assert lesson.rows("select count(*) from raw.question_latencies where run_id = 'keyword_overlap'") == [(9,)]
    # a run written through the API ranks its ties in Docent's seed order too (trec_eval's would be by doc id)
    copy = lesson.copy(tmp_path / "copy")
    seed_order = [doc_id for (doc_id,) in copy.rows("select doc_id from staging.stg_seeds__docs order by doc_position")]
    assert seed_order != sorted(seed_order, reverse=True)
    rm.write_run("docent", "flat", [("free_plan_cost", d, 1.0) for d in sorted(seed_order)], database=copy.db_path)
    assert warehouse_rankings(copy.connect(), "docent", "flat") == {"free_plan_cost": seed_order}
