"""Agreement before trust (docs/judging.md): judge_agreement gives an automatic judge's Cohen's kappa, linear and
quadratic weighted kappa with people on the pairs both graded, each with its bootstrap interval over questions,
all equal to scikit-learn's cohen_kappa_score on the same pairs (and on the same resamples); judge_confusion is
the confusion matrix; judge_leaderboard_agreement's tau, tau_AP and RBO between the runs' leaderboards on the
judge's grades and on people's equal scipy and the formulas on pytrec_eval's and ir_measures' values of the same
pairs; the judge gate fails a build whose judge agrees less than the collection asks."""

from __future__ import annotations

import math
import os
import random
from collections import Counter
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from conftest import Warehouse, cli_in_process
from retrieval_metrics.building import source_selection
from retrieval_metrics.settings import project_defaults
from test_qrels_version_changes import leaderboard, rbo, tau_ap
from test_trec_agreement import make_collection
from trec_reference import Settings, references

pytestmark = pytest.mark.dbt

HERE = Path(__file__).parent
RESAMPLES, SEED = 1000, 20261203  # dbt_project.yml's bootstrap_resamples and bootstrap_seed
GEN_KS = project_defaults()["k_values"]  # the generated collection has no cutoffs of its own: the var's


@pytest.fixture(scope="module")
def judged(lesson: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> tuple[Warehouse, Path]:
    """A generated collection with five runs and a sixth equal to the first (every value tied), its judged pairs
    graded again by a noisy judge (version 1), built."""
    folder = tmp_path_factory.mktemp("agreement")
    qrels, runs = make_collection(random.Random(5), folder / "collection", n_runs=5)
    warehouse = lesson.copy(folder / "warehouse")
    for number, run in enumerate([*runs, runs[0]]):
        extra = ["--qrels", str(qrels)] if number == 0 else []
        result = warehouse.cli("import", "--collection", "gen", *extra, "--run", str(run), "--run-id", f"run{number}")
        assert result.returncode == 0, result.stderr
    result = judge(warehouse, "--collection", "gen", "--judge", "agreement_judges:NoisyJudge", "--param",
                   f"qrels={qrels}", "--param", "keep=0.6", "--pairs", "judged", "--build")  # fmt: skip
    assert result.returncode == 0, result.stderr
    return warehouse, qrels


def judge(warehouse: Warehouse, *args: str):  # noqa: ANN201
    env = {**warehouse.env, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    return cli_in_process("judge", *args, env=env)


def pairs(warehouse: Warehouse) -> list[tuple[str, int, int]]:
    """(question, judge's grade, people's grade) of every pair both graded, straight from the raw tables: the
    people's grade is the latest label file's, else the base qrels'."""
    people = {(q, d): g for q, d, g in warehouse.rows(
        "select question_id, doc_id, relevance from raw.qrels where collection_id = 'gen'")}  # fmt: skip
    for q, d, g in warehouse.rows("select question_id, doc_id, grade from raw.judgments where collection_id = 'gen' "
                                  "and judge_kind = 'human' order by qrels_version"):  # fmt: skip
        people[q, d] = g
    return [(q, g, people[q, d]) for q, d, g in warehouse.rows(
        "select question_id, doc_id, grade from raw.judgments where collection_id = 'gen' and judge_kind = 'automatic' "
        "order by question_id, doc_id") if (q, d) in people]  # fmt: skip


def sklearn_kappas(rows: list[tuple[str, int, int]], relevance_level: int = 1) -> dict[str, float]:
    judge_grades = [g for _, g, _ in rows]
    people_grades = [p for _, _, p in rows]
    grades = list(range(min(judge_grades + people_grades), max(judge_grades + people_grades) + 1))
    return {
        "kappa": cohen_kappa_score([g >= relevance_level for g in judge_grades],
                                   [p >= relevance_level for p in people_grades], labels=[False, True]),
        "weighted_kappa_linear": cohen_kappa_score(judge_grades, people_grades, labels=grades, weights="linear"),
        "weighted_kappa_quadratic": cohen_kappa_score(judge_grades, people_grades, labels=grades, weights="quadratic"),
    }  # fmt: skip


def bootstrap_intervals(rows: list[tuple[str, int, int]]) -> dict[str, tuple[float, float]]:
    """The documented bootstrap, resample by resample with scikit-learn: the questions in id order, drawn as
    numpy.random.default_rng(seed).integers(0, Q, (resamples, Q)); a kappa undefined in a resample is left out."""
    questions = sorted({q for q, _, _ in rows})
    by_question = {q: [row for row in rows if row[0] == q] for q in questions}
    drawn = np.random.default_rng(SEED).integers(0, len(questions), (RESAMPLES, len(questions)))
    values: dict[str, list[float]] = {}
    for resample in drawn:
        chosen = [row for number in resample for row in by_question[questions[number]]]
        with np.errstate(divide="ignore", invalid="ignore"):
            for name, value in sklearn_kappas(chosen).items():
                if not np.isnan(value):
                    values.setdefault(name, []).append(value)
    return {name: tuple(np.quantile(found, [0.025, 0.975])) for name, found in values.items()}


def agreement_row(warehouse: Warehouse) -> dict[str, object]:
    columns = [c for (c,) in warehouse.rows("select column_name from information_schema.columns "
                                            "where table_name = 'judge_agreement' order by ordinal_position")]  # fmt: skip
    (row,) = warehouse.rows("select * from judge_agreement where collection_id = 'gen'")
    return dict(zip(columns, row, strict=True))


def assert_agreement_equals_sklearn(warehouse: Warehouse) -> None:
    rows = pairs(warehouse)
    got = agreement_row(warehouse)
    assert got["n_pairs"] == len(rows) > 50
    assert got["n_questions"] == len({q for q, _, _ in rows})
    expected = sklearn_kappas(rows)
    intervals = bootstrap_intervals(rows)
    for name, value in expected.items():
        assert got[name] == pytest.approx(value, abs=1e-12), name
        assert (got[f"{name}_ci_low"], got[f"{name}_ci_high"]) == pytest.approx(intervals[name], abs=1e-12), name
    assert 0 < got["kappa"] < 1  # a judge that copies 60% of the grades: some agreement, not all
    confusion = Counter((g, p) for _, g, p in rows)
    assert {(g, p): n for g, p, n in warehouse.rows(
        "select judge_grade, people_grade, n_pairs from judge_confusion where collection_id = 'gen'")} == confusion


def test_agreement_with_people_equals_scikit_learn(judged: tuple[Warehouse, Path]) -> None:
    warehouse, _ = judged
    assert_agreement_equals_sklearn(warehouse)
    got = agreement_row(warehouse)
    assert (got["judge"], got["judge_version"], got["qrels_version"]) == ("agreement_judges:NoisyJudge", "2.0", 1)
    latencies = [ms for (ms,) in warehouse.rows("select latency_ms from raw.judgments where judge_kind = 'automatic' "
                                                "and collection_id = 'gen' order by question_id, doc_id")]  # fmt: skip
    assert got["n_judgments"] == len(latencies) and all(ms >= 0 for ms in latencies)
    assert got["mean_latency_ms"] == pytest.approx(sum(latencies) / len(latencies), rel=1e-12)
    assert got["p95_latency_ms"] == pytest.approx(float(np.quantile(latencies, 0.95)), rel=1e-12)
    assert got["min_judge_kappa"] is None and got["passes_gate"] is True
    # people's grades come first: a judge that graded only pairs people graded changes no grade the measures use
    measured = "select question_id, doc_id, relevance from intermediate.int_qrels_unioned where collection_id = 'gen'"
    base = "select question_id, doc_id, relevance from raw.qrels where collection_id = 'gen'"
    assert sorted(warehouse.rows(measured)) == sorted(warehouse.rows(base))
    assert warehouse.rows("select n_changed from raw.judgment_versions where collection_id = 'gen'") == [(0,)]


def question_values(warehouse: Warehouse) -> dict[str, dict[str, dict[str, dict[str, float]]]]:
    """labels -> run -> question -> measure name -> value, from int_judge_question_measures."""
    values: dict = {}
    for labels, run_id, question_id, name, value in warehouse.rows(
        "select labels, run_id, question_id, measure_name, value from intermediate.int_judge_question_measures "
        "where collection_id = 'gen'"):  # fmt: skip
        values.setdefault(labels, {}).setdefault(run_id, {}).setdefault(question_id, {})[name] = value
    return values


def picounits(value: float) -> int:
    """A value in units of 1e-12, rounded half away from zero, as the mart adds them."""
    return int(Decimal(value * 1e12).to_integral_value(ROUND_HALF_UP))


def correlations(totals: dict[str, dict[str, float]]) -> tuple[float, float, float]:
    """tau-b (scipy), tau_AP of the judge's leaderboard against people's, RBO: labels -> run -> total."""
    run_ids = sorted(totals["judge"])
    tau = stats.kendalltau([totals["judge"][r] for r in run_ids], [totals["people"][r] for r in run_ids]).statistic
    judge_board, people_board = leaderboard(totals["judge"]), leaderboard(totals["people"])
    return float(tau), tau_ap(judge_board, people_board), rbo(judge_board, people_board, 0.9)


def test_the_judges_leaderboard_against_peoples_equals_a_direct_computation(judged: tuple[Warehouse, Path]) -> None:
    warehouse, _ = judged
    both = warehouse.rows("select question_id, doc_id, judge_grade, people_grade from "
                          "intermediate.int_judge_agreement_pairs where collection_id = 'gen'")  # fmt: skip
    assert sorted((q, g, p) for q, _, g, p in both) == sorted(pairs(warehouse))
    labelled = {"judge": {}, "people": {}}
    for question_id, doc_id, judge_grade, people_grade in both:
        labelled["judge"].setdefault(question_id, {})[doc_id] = judge_grade
        labelled["people"].setdefault(question_id, {})[doc_id] = people_grade
    run_ids = [f"run{number}" for number in range(6)]
    got = question_values(warehouse)
    for run_id in run_ids:  # each question's value on the pairs both graded: pytrec_eval's and ir_measures'
        rankings: dict[str, list[str]] = {}
        for question_id, doc_id in warehouse.rows(
            "select question_id, doc_id from raw.rankings where collection_id = 'gen' and run_id = ? "
            "order by question_id, rank", [run_id]):  # fmt: skip
            rankings.setdefault(question_id, []).append(doc_id)
        run = {q: {d: -float(rank) for rank, d in enumerate(docs, start=1)} for q, docs in rankings.items()}
        for labels, qrels in labelled.items():
            assert set(got[labels][run_id]) == set(qrels)
            # pytrec_eval 0.5 crashes (bpref) on a question whose only judgments are negative grades and retrieved:
            # those questions are left to test_trec_agreement's cases, here only in the leaderboards below
            checked = {q: docs for q, docs in qrels.items() if max(docs.values()) >= 0}
            assert len(checked) > 20
            expected = references(checked, run, rankings, GEN_KS, Settings()).values
            for question_id in checked:
                names = got[labels][run_id][question_id]
                assert len(names) > 20
                for name, value in names.items():
                    assert value == pytest.approx(expected[question_id][name], abs=1e-9), (labels, run_id, name)
    rows = warehouse.rows("select measure_name, n_runs, n_questions, kendall_tau, kendall_tau_ci_low, "
                          "kendall_tau_ci_high, tau_ap, tau_ap_ci_low, tau_ap_ci_high, rbo, rbo_ci_low, rbo_ci_high, "
                          "n_swapped_pairs, judge from judge_leaderboard_agreement where collection_id = 'gen'")  # fmt: skip
    assert {name for name, *_ in rows} == set(next(iter(got["judge"]["run0"].values())))
    question_ids = sorted(labelled["judge"])
    drawn = np.random.default_rng(SEED).integers(0, len(question_ids), (RESAMPLES, len(question_ids)))
    swapped = 0
    for name, n_runs, n_questions, *statistics, n_swapped, judge_name in rows:
        assert (n_runs, n_questions, judge_name) == (6, len(question_ids), "agreement_judges:NoisyJudge")
        totals = {labels: {r: sum(picounits(got[labels][r][q][name]) for q in question_ids) for r in run_ids}
                  for labels in labelled}  # fmt: skip
        assert totals["judge"]["run0"] == totals["judge"]["run5"]  # run5 is run0: tied
        expected = correlations(totals)
        assert statistics[0::3] == pytest.approx(expected, abs=1e-12), name
        judge_board, people_board = leaderboard(totals["judge"]), leaderboard(totals["people"])
        assert n_swapped == sum(1 for a in run_ids for b in run_ids if judge_board.index(a) < judge_board.index(b)
                                and totals["judge"][a] != totals["judge"][b] and totals["people"][a] != totals["people"][b]
                                and (totals["judge"][a] > totals["judge"][b]) != (totals["people"][a] > totals["people"][b]))
        swapped += n_swapped
        if name in ("ndcg_cut_3", "recip_rank"):  # the intervals: the same resamples as the kappas'
            resampled = []
            for draw in drawn:
                counts = np.bincount(draw, minlength=len(question_ids))
                resampled.append(correlations({labels: {r: sum(
                    int(counts[i]) * picounits(got[labels][r][q][name]) for i, q in enumerate(question_ids) if counts[i])
                    for r in run_ids} for labels in labelled}))  # fmt: skip
            for position, values in enumerate(zip(*resampled)):
                values = [v for v in values if not math.isnan(v)]
                bounds = np.quantile(values, [0.025, 0.975])
                assert statistics[3 * position + 1: 3 * position + 3] == pytest.approx(list(bounds), abs=1e-12), name
    assert swapped > 0  # a judge that copies 60% of the grades reorders some runs


def test_new_rankings_rebuild_the_judges_leaderboards_only_where_a_judge_graded(
    judged: tuple[Warehouse, Path], lesson: Warehouse
) -> None:
    """A build selected by changed raw tables leaves out the judges' leaderboards while no automatic judge has
    graded anything, and the judging queue while there is no pool: they are empty then, whatever the rankings."""
    models = ["intermediate.int_judge_question_measures", "intermediate.int_judge_leaderboards",
              "main.judge_leaderboard_agreement", "main.judging_queue", "main.judging_pool_coverage"]  # fmt: skip
    assert all(lesson.rows(f"select count(*) from {model}") == [(0,)] for model in models)
    def reading(*tables: str) -> list[str]:  # the tables and tests that read them, not the views
        kinds = ("config.materialized:table", "config.materialized:incremental", "resource_type:test")
        return ["--select", *(f"source:raw.{table}+,{kind}" for table in tables for kind in kinds)]

    new_rankings = reading("runs", "rankings")
    no_judge, no_pool = ["--exclude", "int_judge_question_measures+"], ["--exclude", "judging_queue+"]
    no_versions = ["--exclude", "qrels_version_changes+"]  # one qrels version
    no_python = ["--exclude", "int_user_measure_values"]  # no collection defines a Python measure
    new_runs = source_selection(["runs", "rankings"], lesson.db_path)
    assert new_runs == new_rankings + no_judge + no_pool + no_versions + no_python
    graded = source_selection(["runs", "rankings"], judged[0].db_path)
    assert graded == new_rankings + no_pool + no_python  # graded, versioned
    assert source_selection(["judgments"], lesson.db_path) == [*reading("judgments"), *no_pool, *no_versions,
                                                               *no_python]  # fmt: skip
    assert source_selection(["judging_pools"], lesson.db_path) == [*reading("judging_pools"), *no_judge,
                                                                   *no_versions, *no_python]  # fmt: skip


def test_a_person_correcting_the_judge_changes_the_agreement(judged: tuple[Warehouse, Path], tmp_path: Path) -> None:
    warehouse = judged[0].copy(tmp_path / "copy")
    before = agreement_row(warehouse)["kappa"]
    disagreed = [(q, d, p) for q, d, g, p in warehouse.rows(
        "select j.question_id, j.doc_id, j.grade, q.relevance from raw.judgments as j inner join raw.qrels as q "
        "using (collection_id, question_id, doc_id) where j.judge_kind = 'automatic' and j.grade <> q.relevance "
        "order by all limit 8")]  # fmt: skip
    labels = tmp_path / "labels.csv"  # a person sides with the judge on 8 pairs the base qrels graded otherwise
    labels.write_text("question_id,doc_id,grade\n" + "".join(
        f"{q},{d},{g}\n" for q, d, g in warehouse.rows(
            "select question_id, doc_id, grade from raw.judgments where judge_kind = 'automatic' and "
            "list_contains(?, question_id || '/' || doc_id)", [[f"{q}/{d}" for q, d, _ in disagreed]])))  # fmt: skip
    result = warehouse.cli("import", "--collection", "gen", "--judgments", str(labels), "--judge", "ann", "--build")
    assert result.returncode == 0, result.stderr
    assert_agreement_equals_sklearn(warehouse)
    assert agreement_row(warehouse)["kappa"] >= before


def test_the_judge_gate_fails_a_build_below_its_kappa(judged: tuple[Warehouse, Path], tmp_path: Path) -> None:
    warehouse = judged[0].copy(tmp_path / "copy")
    kappa = agreement_row(warehouse)["kappa"]
    assert warehouse.cli("settings", "--collection", "gen", "--set", f"min_judge_kappa={kappa + 0.05:.3f}"
                         ).returncode == 0  # fmt: skip
    failed = warehouse.cli("build")
    assert failed.returncode != 0 and "judge_gate" in failed.stdout + failed.stderr
    assert warehouse.rows("select qrels_version, passes_gate from judge_agreement where collection_id = 'gen'"
                          ) == [(1, False)]  # fmt: skip
    assert warehouse.cli("settings", "--collection", "gen", "--set", f"min_judge_kappa={kappa - 0.05:.3f}"
                         ).returncode == 0  # fmt: skip
    assert warehouse.cli("build").returncode == 0
    refused = warehouse.cli("settings", "--collection", "gen", "--set", "min_judge_kappa=1.5")
    assert refused.returncode == 2 and "min_judge_kappa: '1.5' is not none or a number from -1 to 1" in refused.stderr


def test_the_report_shows_each_judge_beside_its_cost(judged: tuple[Warehouse, Path], tmp_path: Path) -> None:
    warehouse, _ = judged
    assert warehouse.cli("report", "--out", str(tmp_path / "report")).returncode == 0
    page = (tmp_path / "report" / "index.html").read_text()
    row = agreement_row(warehouse)
    judge_row = page[page.index('class="judge" data-version="1"'):].split("</tr>")[0]
    assert "agreement_judges:NoisyJudge 2.0" in judge_row
    assert f"{row['kappa']:.3f} [{row['kappa_ci_low']:.3f}, {row['kappa_ci_high']:.3f}]" in judge_row
    assert f"<td>{row['mean_latency_ms']:.3f}</td>" in judge_row
    ((tau, low, high),) = warehouse.rows("select kendall_tau, kendall_tau_ci_low, kendall_tau_ci_high from "
                                         "judge_leaderboard_agreement where measure_name = 'recip_rank'")  # fmt: skip
    order_row = page[page.index('class="judge-order" data-version="1" data-measure="recip_rank"'):].split("</tr>")[0]
    assert f"{tau:.3f} [{low:.3f}, {high:.3f}]" in order_row
