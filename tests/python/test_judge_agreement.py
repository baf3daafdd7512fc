"""Agreement before trust (docs/judging.md): judge_agreement gives an automatic judge's Cohen's kappa, linear and
quadratic weighted kappa with people on the pairs both graded, each with its bootstrap interval over questions,
all equal to scikit-learn's cohen_kappa_score on the same pairs (and on the same resamples); judge_confusion is
the confusion matrix; the judge gate fails a build whose judge agrees less than the collection asks."""

from __future__ import annotations

import os
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from conftest import Warehouse, cli_in_process
from test_trec_agreement import make_collection

pytestmark = pytest.mark.dbt

HERE = Path(__file__).parent
RESAMPLES, SEED = 1000, 20261203  # dbt_project.yml's bootstrap_resamples and bootstrap_seed


@pytest.fixture(scope="module")
def judged(lesson: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> tuple[Warehouse, Path]:
    """A generated collection with two runs, its judged pairs graded again by a noisy judge (version 1), built."""
    folder = tmp_path_factory.mktemp("agreement")
    qrels, runs = make_collection(random.Random(5), folder / "collection", n_runs=2)
    warehouse = lesson.copy(folder / "warehouse")
    for number, run in enumerate(runs):
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
