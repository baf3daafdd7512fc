"""Random TREC qrels and runs, imported and built, agree with pytrec_eval to 1e-9: every per-question value
and both kinds of mean. The generator deliberately makes the cases where evaluators disagree."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from conftest import REPO_ROOT, Warehouse
from retrieval_metrics.cli import main as cli
from trec_reference import assert_matches_trec_eval

pytestmark = pytest.mark.dbt
KS = [1, 3, 5, 10]


def make_collection(rng: random.Random, folder: Path, n_runs: int) -> tuple[Path, list[Path]]:
    """Write one qrels file and n_runs run files with every awkward case we know of."""
    folder.mkdir(parents=True)
    question_ids = ["7", "07", "007", "q-1", "Q.2"] + [f"q{i}" for i in range(25)]
    doc_ids = ["1", "01", "001", "10", "9", "d.9", "D9"] + [f"doc{i:03d}" for i in range(60)]
    qrels_lines: list[str] = []
    for position, question_id in enumerate(question_ids[:-3]):  # the last 3 are in runs only: ignored
        judged = rng.sample(doc_ids, rng.randint(1, 8))
        for doc_id in judged:
            grade = 0 if position == 0 else rng.choice([0, 0, 1, 1, 2, 3])  # "7" has only grade-0 judgments
            qrels_lines.append(f"{question_id} 0 {doc_id} {grade}")
    qrels = folder / "qrels.txt"
    qrels.write_text("\n".join(qrels_lines) + "\n")
    runs: list[Path] = []
    for run_number in range(n_runs):
        lines: list[str] = []
        for question_id in question_ids:
            if rng.random() < 0.15:
                continue  # question missing from the run
            for doc_id in rng.sample(doc_ids, rng.choice([0, 1, 2, 4, 12, 30]) or 1):  # often shorter than k
                style = rng.random()
                if style < 0.4:
                    score = f"{rng.randint(0, 4) / 2:.1f}"  # coarse: many ties, broken by docno
                elif style < 0.6:
                    score = f"{rng.uniform(-1, 1):.3e}"  # exponent notation, negative scores
                elif style < 0.8:
                    base = rng.randint(1, 3) / 10  # equal as 32-bit floats, different as doubles
                    score = repr(base + rng.choice([0.0, 1e-10, -1e-10]))
                else:
                    score = repr(rng.uniform(0, 100))
                separator = rng.choice([" ", "\t"])
                lines.append(separator.join([question_id, "Q0", doc_id, str(rng.randint(1, 999)), score, "tag"]))
        rng.shuffle(lines)  # file order and the rank column mean nothing to trec_eval
        path = folder / f"run{run_number}.txt"
        path.write_text("\n".join(lines) + "\n")
        runs.append(path)
    return qrels, runs


def parse_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        question_id, _, doc_id, grade = line.split()
        qrels.setdefault(question_id, {})[doc_id] = int(grade)
    return qrels


def parse_run(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        question_id, _, doc_id, _, score, _ = line.split()
        run.setdefault(question_id, {})[doc_id] = float(score)
    return run


@pytest.fixture(scope="module")
def collections(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[Path]]]:
    rng = random.Random(20261202)
    root = tmp_path_factory.mktemp("trec")
    return {f"random{i}": make_collection(rng, root / f"random{i}", n_runs=2) for i in range(2)}


@pytest.fixture(scope="module")
def imported(
    tmp_path_factory: pytest.TempPathFactory, collections: dict[str, tuple[Path, list[Path]]]
) -> Warehouse:
    """Every collection and run imported once into one warehouse; each test builds it with its own settings."""
    folder = tmp_path_factory.mktemp("agreement")
    warehouse = Warehouse(REPO_ROOT, folder / "warehouse.duckdb")
    db = ["--db", str(warehouse.db_path)]
    for name, (qrels, runs) in collections.items():
        assert cli(["import", "--collection", name, "--qrels", str(qrels), *db]) == 0
        for number, run in enumerate(runs):
            assert cli(["import", "--collection", name, "--run", str(run), "--run-id", f"run{number}", *db]) == 0
    return warehouse


@pytest.mark.parametrize("averaging", ["all_questions", "retrieved_only"])
def test_every_value_and_mean_equals_pytrec_eval(
    imported: Warehouse, collections: dict[str, tuple[Path, list[Path]]], averaging: str
) -> None:
    imported.build("--exclude", "tag:lesson_golden", "--vars", f"{{k_values: {KS}, averaging: {averaging}}}")
    checked = 0
    with imported.connect() as con:
        for name, (qrels_path, runs) in collections.items():
            qrels = parse_qrels(qrels_path)
            for number, run_path in enumerate(runs):
                # one row per qrels question and k: questions only in the run are ignored
                questions = con.execute(
                    "select distinct question_id from question_metrics where collection_id = ? and run_id = ?",
                    [name, f"run{number}"],
                ).fetchall()
                assert {row[0] for row in questions} == set(qrels)
                checked += assert_matches_trec_eval(
                    con, name, f"run{number}", qrels, parse_run(run_path), KS, averaging, tolerance=1e-9
                )
    assert checked > 1000


def test_ids_stay_text(imported: Warehouse) -> None:
    ids = {row[0] for row in imported.rows("select distinct question_id from raw.qrels")}
    assert {"7", "07", "007"} <= ids
    docs = {row[0] for row in imported.rows("select distinct doc_id from raw.rankings")}
    assert {"1", "01", "001"} <= docs
