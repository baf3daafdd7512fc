"""Editing the golden judgments changes the numbers exactly as trec_eval would on the same rankings."""

from __future__ import annotations

import statistics

import pytest

from conftest import Warehouse, copy_project
from trec_reference import assert_matches_trec_eval, warehouse_inputs

pytestmark = pytest.mark.dbt


@pytest.fixture(scope="module")
def edited(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    """A copy of the project with edited seeds, ranked once; each test builds it with Docent's averaging its own."""
    project = copy_project(tmp_path_factory.mktemp("edited"))
    seeds = project.project_dir / "seeds"
    with (seeds / "golden_qrels.csv").open("a") as qrels:
        qrels.write("pro_plan_cost,ratelimits,2\n")  # a second, more relevant doc (the lesson's Exercise 3)
        qrels.write("free_plan_cost,backups,0\n")  # judged, not relevant
        qrels.write("region_change,backups,1\n")  # relevant, ranked low
    with (seeds / "golden_questions.csv").open("a") as questions:
        questions.write("unjudged_question,Which regions support read replicas?\n")
    return project.ranked("--retriever", "keyword_overlap")


def assert_matches_trec_eval_on(warehouse: Warehouse, averaging: str) -> None:
    with warehouse.connect() as con:
        qrels, run = warehouse_inputs(con, "docent", "keyword_overlap")
        assert assert_matches_trec_eval(con, "docent", "keyword_overlap", qrels, run, [1, 2, 3], averaging, 1e-12)
        averaged = con.execute("select distinct n_questions from run_metrics").fetchall()
    # every golden question, the unjudged one too (all_questions); the 9 trec_eval evaluates (retrieved_only)
    assert averaged == [(10 if averaging == "all_questions" else 9,)]


def average(warehouse: Warehouse, averaging: str) -> None:
    given = warehouse.cli("settings", "--collection", "docent", "--set", f"averaging={averaging}")
    assert given.returncode == 0, given.stderr


def test_graded_multi_relevant_edit_matches_trec_eval(edited: Warehouse) -> None:
    average(edited, "all_questions")
    result = edited.build("--exclude", "tag:lesson_golden")
    assert_matches_trec_eval_on(edited, "all_questions")
    # the unjudged question counts 0 in every mean, and a warning-level test names it
    warned = [r for r in result.result if "assert_every_question_has_a_relevant_judgment" in r.node.unique_id]
    assert [str(r.status) for r in warned] == ["warn"]
    stored = edited.rows("select question_id from dbt_test__audit.assert_every_question_has_a_relevant_judgment")
    assert stored == [("unjudged_question",)]
    # the edit moved the numbers: pro_plan_cost's grade-2 doc sits at rank 1, its grade-1 doc at rank 2,
    # so its NDCG@2 rises from the lesson's 0.631 to 1.0
    ndcg = edited.rows("select ndcg from question_metrics where question_id = 'pro_plan_cost' and k = 2")[0][0]
    assert ndcg == pytest.approx(1.0, abs=1e-12)


def test_retrieved_only_averaging_matches_trec_eval_default(edited: Warehouse) -> None:
    average(edited, "retrieved_only")
    edited.build("--exclude", "tag:lesson_golden")
    assert_matches_trec_eval_on(edited, "retrieved_only")
    # trec_eval's default evaluates the questions present in both the run and the qrels
    assert edited.rows("select distinct n_questions from run_metrics") == [(9,)]
    recall_mean = statistics.fmean(
        r[0] for r in edited.rows("select recall from question_metrics where k = 2 and is_averaged")
    )
    assert edited.rows("select recall from run_metrics where k = 2")[0][0] == pytest.approx(recall_mean)
