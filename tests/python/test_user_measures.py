"""Measures users define (retrieval_metrics/user_measures.py): docs/examples/user_measures.py's two measures, one
SQL and one Python, registered by a collection's setting and computed in the warehouse like the registry's:
each question's value equal to a direct computation from the imported files, a row of run_measures with its
interval, paired in the comparisons. A bad definition is refused before dbt starts, in one line naming the file
and the measure, exit 2, nothing written."""

from __future__ import annotations

import math
import random
from pathlib import Path

import duckdb
import pytest

from conftest import REPO_ROOT, Warehouse
from retrieval_metrics.cli import main as cli

EXAMPLE = REPO_ROOT / "docs" / "examples" / "user_measures.py"
COLLECTION = "mine"


def write_collection(rng: random.Random, folder: Path) -> tuple[Path, list[Path]]:
    """Graded qrels (-1 .. 3), two runs with tied scores, unjudged documents and a question they lack."""
    folder.mkdir(parents=True)
    docs = [f"d{i:02d}" for i in range(30)]
    qrels = folder / "qrels.txt"
    qrels.write_text("".join(f"q{q:02d} 0 {doc} {rng.choice([-1, 0, 0, 1, 2, 3])}\n"
                             for q in range(10) for doc in rng.sample(docs, 12)))  # fmt: skip
    runs = []
    for number in range(2):
        run = folder / f"run{number}.txt"
        run.write_text("".join(f"q{q:02d} Q0 {doc} 0 {rng.randint(0, 5)} tag\n"
                               for q in range(10) if q != 4 for doc in rng.sample(docs, rng.randint(2, 15))))  # fmt: skip
        runs.append(run)
    return qrels, runs


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    folder = tmp_path_factory.mktemp("user_measures")
    qrels, runs = write_collection(random.Random(48), folder / "collection")
    warehouse = Warehouse(REPO_ROOT, folder / "warehouse.duckdb")
    db, collection = ["--db", str(warehouse.db_path)], ["--collection", COLLECTION]
    for number, run in enumerate(runs):
        given = ["--qrels", str(qrels)] if number == 0 else []
        assert cli(["import", *collection, *given, "--run", str(run), "--run-id", f"run{number}", *db]) == 0
    assert cli(["settings", *collection, "--set", "baseline_run_id=run0", "--set", f"user_measures={EXAMPLE}", *db]) == 0
    warehouse.build("--select", "+run_measures", "+question_comparisons", "--indirect-selection", "cautious")
    return warehouse


def direct(warehouse: Warehouse, run_id: str) -> dict[str, dict[str, float]]:
    """Both measures computed here from the warehouse's qrels and ranking, question by question."""
    grades: dict[str, dict[str, int]] = {}
    for question_id, doc_id, grade in warehouse.rows("select question_id, doc_id, relevance from "
                                                     "intermediate.int_qrels_unioned where collection_id = ?", [COLLECTION]):  # fmt: skip
        grades.setdefault(question_id, {})[doc_id] = grade
    ranked: dict[str, list[str]] = {}
    for question_id, doc_id in warehouse.rows("select question_id, doc_id from staging.stg_raw__rankings where "
                                              "collection_id = ? and run_id = ? order by rank", [COLLECTION, run_id]):  # fmt: skip
        ranked.setdefault(question_id, []).append(doc_id)
    values: dict[str, dict[str, float]] = {"relevant_in_top_3": {}, "graded_precision_5": {}}
    for question_id, judged in grades.items():
        top = ranked.get(question_id, [])
        values["relevant_in_top_3"][question_id] = float(sum(judged.get(doc, 0) >= 1 for doc in top[:3]))
        values["graded_precision_5"][question_id] = sum(max(judged.get(doc, 0), 0) for doc in top[:5]) / 5
    return values


@pytest.mark.dbt
@pytest.mark.parametrize("run_id", ["run0", "run1"])
def test_the_example_measures_are_computed_like_the_registrys(built: Warehouse, run_id: str) -> None:
    expected = direct(built, run_id)
    for name, per_question in expected.items():
        ours = dict(built.rows("select question_id, value from question_measures where collection_id = ? and "
                               "run_id = ? and measure_name = ?", [COLLECTION, run_id, name]))  # fmt: skip
        assert ours == pytest.approx(per_question, abs=1e-12), name
        assert any(value > 0 for value in ours.values()), name
        ((mean, low, high, reference),) = built.rows(
            "select value, ci_low, ci_high, measure.reference from run_measures inner join measure_catalog as "
            "measure using (measure) where collection_id = ? and run_id = ? and measure_name = ?",
            [COLLECTION, run_id, name])  # fmt: skip
        assert math.isclose(mean, sum(per_question.values()) / len(per_question), abs_tol=1e-12), name
        assert low <= mean <= high and reference == "user", name


@pytest.mark.dbt
def test_the_example_measures_are_compared_with_the_baseline(built: Warehouse) -> None:
    compared = {name for (name,) in built.rows("select distinct measure_name from question_comparisons where "
                                                "collection_id = ? and run_id = 'run1'", [COLLECTION])}  # fmt: skip
    assert {"relevant_in_top_3", "graded_precision_5"} <= compared


BAD = {
    "sql": ('define_sql("hits", "count(nope)")', "measure 'hits': its SQL fails on sample rows: Binder Error"),
    "python": ("define_byquery(\"first\", lambda qrels, run: 1.0)", "measure 'first': its function is not a named function"),
    "name": ('define_sql("map", "count(*)")', "measure 'map': is the registry's"),
    "not a number": ("define_byquery(\"word\", word)", "measure 'word': its function gives 'one', not a number"),
}


@pytest.mark.parametrize("bad", list(BAD))
def test_a_bad_definition_is_refused_before_dbt_in_one_line(
    tmp_path: Path, bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "warehouse.duckdb"
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "run.txt").write_text("q1 Q0 d1 0 1.0 tag\n")
    assert cli(["import", "--collection", COLLECTION, "--qrels", str(tmp_path / "qrels.txt"), "--run",
                str(tmp_path / "run.txt"), "--run-id", "r", "--db", str(db)]) == 0  # fmt: skip
    capsys.readouterr()
    definition, message = BAD[bad]
    file = tmp_path / "mine.py"
    file.write_text("from retrieval_metrics.user_measures import define_byquery, define_sql\n\n\n"
                    "def word(qrels, run):\n    return 'one'\n\n\n" f"MEASURES = [{definition}]\n")  # fmt: skip
    status = cli(["settings", "--collection", COLLECTION, "--set", f"user_measures={file}", "--db", str(db)])
    error = capsys.readouterr().err.strip()
    assert status == 2 and "\n" not in error, error
    assert f"setting user_measures: '{file}' refused: {file}: {message}" in error, error
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("select count(*) from raw.collection_settings").fetchone() == (0,)
