"""Random TREC qrels and runs, imported and built, agree with pytrec_eval to 1e-9: every per-question value
and both kinds of mean. The generator deliberately makes the cases where evaluators disagree."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from conftest import Warehouse
from import_trec import main as import_trec
from trec_reference import AT_K, WHOLE_RANKING, trec_eval_per_question

KS = [1, 3, 5, 10]
MEASURES = [*AT_K, *WHOLE_RANKING]


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


@pytest.fixture
def imported(warehouse: Warehouse, collections: dict[str, tuple[Path, list[Path]]]) -> Warehouse:
    db = ["--db", str(warehouse.db_path)]
    for name, (qrels, runs) in collections.items():
        assert import_trec(["--collection", name, "--qrels", str(qrels), *db]) == 0
        for number, run in enumerate(runs):
            assert import_trec(["--collection", name, "--run", str(run), "--run-id", f"run{number}", *db]) == 0
    return warehouse


@pytest.mark.parametrize("averaging", ["all_questions", "retrieved_only"])
def test_every_value_and_mean_equals_pytrec_eval(
    imported: Warehouse, collections: dict[str, tuple[Path, list[Path]]], averaging: str
) -> None:
    imported.build("--exclude", "tag:lesson_golden", "--vars", f"{{k_values: {KS}, averaging: {averaging}}}")
    checked = 0
    for name, (qrels_path, runs) in collections.items():
        qrels = parse_qrels(qrels_path)
        for number, run_path in enumerate(runs):
            reference = trec_eval_per_question(qrels, parse_run(run_path), KS)
            ours = imported.rows(
                f"select question_id, k, is_averaged, {', '.join(MEASURES)} from question_metrics "
                "where collection_id = ? and run_id = ?",
                [name, f"run{number}"],
            )
            # one row per qrels question and k: questions only in the run are ignored
            assert {row[0] for row in ours} == set(qrels)
            for question_id, k, is_averaged, *values in ours:
                assert is_averaged == (averaging == "all_questions" or question_id in reference)
                for measure, value in zip(MEASURES, values):
                    key = f"{measure}@{k}" if measure in AT_K else measure
                    expected = reference[question_id][key] if question_id in reference else 0.0
                    assert value == pytest.approx(expected, abs=1e-9), (name, number, question_id, key)
                    checked += 1
            averaged = set(qrels) if averaging == "all_questions" else set(reference)
            means = imported.rows(
                "select k, n_questions, precision, recall, ndcg, hit_rate, mrr, map, r_precision from run_metrics "
                "where collection_id = ? and run_id = ? order by k",
                [name, f"run{number}"],
            )
            assert [row[0] for row in means] == KS
            for k, n_questions, *values in means:
                assert n_questions == len(averaged)
                for measure, value in zip([*AT_K, *WHOLE_RANKING], values):
                    key = f"{measure}@{k}" if measure in AT_K else measure
                    total = sum(reference[q][key] for q in averaged if q in reference)
                    assert value == pytest.approx(total / len(averaged), abs=1e-9), (name, number, key)
    assert checked > 1000


def test_ids_stay_text(imported: Warehouse) -> None:
    ids = {row[0] for row in imported.rows("select distinct question_id from raw.qrels")}
    assert {"7", "07", "007"} <= ids
    docs = {row[0] for row in imported.rows("select distinct doc_id from raw.rankings")}
    assert {"1", "01", "001"} <= docs
