"""A new user's first afternoon, on a small BEIR collection of their own with score ties and typos (issue 46):

1. one tie rule: built-in bm25 on it equals pytrec_eval on bm25's own scores (trec_eval's rule, the default);
2. nothing dropped: a qrels line and a run row naming a question the collection lacks are refused with where they
   are, and nothing is written;
3. defaults that fit: general cutoffs, no baseline, and the scorecard says how to set one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytrec_eval

from conftest import Warehouse, warehouse_checksums
from retrieval_metrics import api as rm
from retrieval_metrics.warehouse import InputError
from test_tie_rule import QRELS, scores_of, write_beir

COLLECTION = "ties"  # test_tie_rule's collection: its helpers read this name


def ok(result) -> str:  # noqa: ANN001 - a CompletedProcess
    assert result.returncode == 0, result.stdout + result.stderr
    return str(result.stdout)


@pytest.mark.dbt
def test_a_new_beir_collection_with_ties_and_typos(warehouse: Warehouse, tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "beir")
    good_qrels = (folder / "qrels" / "test.tsv").read_text()

    # a qrels line naming a question queries.jsonl lacks (q1O for q10): refused with its line, nothing written
    ok(warehouse.cli("import", "--collection", "other", "--qrels", str(write_qrels(tmp_path / "other.txt"))))
    before = warehouse_checksums(warehouse.db_path)
    (folder / "qrels" / "test.tsv").write_text(good_qrels + "q1O\td3\t2\n")
    typo = warehouse.cli("import", "--collection", COLLECTION, "--beir", str(folder))
    assert typo.returncode == 2 and typo.stderr.count("\n") == 1, typo.stderr
    assert f"test.tsv:{len(good_qrels.splitlines()) + 1}: question 'q1O' is not a question of" in typo.stderr
    assert warehouse_checksums(warehouse.db_path) == before
    (folder / "qrels" / "test.tsv").write_text(good_qrels)
    ok(warehouse.cli("import", "--collection", COLLECTION, "--beir", str(folder)))

    # defaults: the general cutoffs and no baseline
    shown = ok(warehouse.cli("settings", "--collection", COLLECTION))
    assert "k_values 1, 3, 5, 10, 100 (the var's)" in shown and "tie_rule trec_eval" in shown, shown
    assert "baseline_run_id none" in shown, shown

    ok(warehouse.rank("--collection", COLLECTION, "--retriever", "bm25"))
    ok(warehouse.rank("--collection", COLLECTION, "--retriever", "keyword_normalized"))
    # a notebook's run with a question id in the wrong case: refused with the row, nothing written
    before = warehouse_checksums(warehouse.db_path)
    with pytest.raises(InputError, match="question 'Q1' is not a question of collection 'ties'"):
        rm.write_run(COLLECTION, "notebook", [("q1", "d1", 1.0), ("Q1", "d3", 0.5)], database=warehouse.db_path)
    assert warehouse_checksums(warehouse.db_path) == before

    warehouse.built()
    # 1: bm25's numbers are pytrec_eval's on its own scores (which tie on every question)
    scores = scores_of(warehouse, "bm25")
    assert all(len(s) > len(set(s.values())) for s in scores.values())
    expected = pytrec_eval.RelevanceEvaluator(QRELS, {"ndcg_cut_10", "recip_rank"}).evaluate(scores)
    got = dict(((q, m), v) for q, m, v in warehouse.rows(
        "select question_id, measure_name, value from question_measures where collection_id = ? and run_id = 'bm25' "
        "and measure_name in ('ndcg_cut_10', 'recip_rank')", [COLLECTION]))  # fmt: skip
    assert got.keys() == {(q, m) for q in expected for m in expected[q]}
    for (question_id, measure), value in got.items():
        assert value == pytest.approx(expected[question_id][measure], abs=1e-12), (question_id, measure)

    # 3: measured at the general cutoffs, compared with nothing, and the scorecard says how to compare
    ks = warehouse.rows("select distinct k from question_metrics where collection_id = ? order by k", [COLLECTION])
    assert [k for (k,) in ks] == [1, 3, 5, 10, 100]
    assert warehouse.rows("select count(*) from question_comparisons where collection_id = ?", [COLLECTION]) == [(0,)]
    scorecard = ok(warehouse.cli("scorecard"))
    assert (f"{COLLECTION}: no baseline run, so its runs are not compared: set one with `retrieval-metrics settings "
            f"--collection {COLLECTION} --set baseline_run_id=bm25`") in scorecard  # fmt: skip
    listed = json.loads(ok(warehouse.cli("list", "--collection", COLLECTION, "--json")))
    assert [run["run_id"] for c in listed["collections"] for run in c["runs"]] == ["bm25", "keyword_normalized"]


def write_qrels(path: Path) -> Path:
    """Another collection's TREC qrels: the warehouse is not empty when the refused import is tried."""
    path.write_text("1 0 a 1\n")
    return path
