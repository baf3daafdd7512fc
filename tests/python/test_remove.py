"""retrieval-metrics remove: a run, a collection's judgments, or a whole collection leaves the raw tables in one
transaction, recorded in raw.removals; the next build drops it from every mart and the serving copy. What is not
there, judgments that runs still need, Docent's seeds and --all without --yes are refused in one line."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from conftest import Warehouse
from test_trec_agreement import make_collection

pytestmark = pytest.mark.dbt


@pytest.fixture(scope="module")
def imported_once(lesson: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    """The lesson's Docent run beside an imported collection `gen` with two runs, not built. Read it; change a
    .copy() (the `imported` fixture)."""
    folder = tmp_path_factory.mktemp("imported")
    qrels, runs = make_collection(random.Random(3), folder / "collection", n_runs=2)
    warehouse = lesson.copy(folder / "warehouse")
    for number, run in enumerate(runs):
        result = warehouse.cli("import", "--collection", "gen", *(["--qrels", str(qrels)] if not number else []),
                               "--run", str(run), "--run-id", f"run{number}")  # fmt: skip
        assert result.returncode == 0, result.stderr
    return warehouse


@pytest.fixture
def imported(imported_once: Warehouse, tmp_path: Path) -> Warehouse:
    """A copy of it, for one test to change."""
    return imported_once.copy(tmp_path / "warehouse")


@pytest.fixture
def two_collections(imported: Warehouse) -> Warehouse:
    """The same, built and published."""
    built = imported.cli("build")
    assert built.returncode == 0, built.stderr
    return imported


def served(warehouse: Warehouse, sql: str) -> list[tuple[object, ...]]:
    return Warehouse(warehouse.project_dir, warehouse.db_path.with_name("serving.duckdb")).rows(sql)


RUNS = "select distinct collection_id, run_id from run_measures order by all"


def test_a_removed_run_and_then_its_collection_leave_every_mart(two_collections: Warehouse) -> None:
    warehouse = two_collections
    assert served(warehouse, RUNS) == [("docent", "keyword_overlap"), ("gen", "run0"), ("gen", "run1")]
    removed = warehouse.cli("remove", "--collection", "gen", "--run-id", "run1")
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.startswith("retrieval-metrics remove: removed run gen/run1 (")
    assert warehouse.cli("build").returncode == 0
    assert served(warehouse, RUNS) == [("docent", "keyword_overlap"), ("gen", "run0")]
    for mart in ("question_metrics", "run_metrics", "run_leaderboard", "question_measures", "missed_relevant_docs"):
        assert not warehouse.rows(f"select 1 from {mart} where run_id = 'run1'"), mart

    refused = warehouse.cli("remove", "--collection", "gen", "--judgments")  # run0 still needs them
    assert refused.returncode == 2
    assert "still has runs that are scored against its judgments (run0)" in refused.stderr
    unconfirmed = warehouse.cli("remove", "--collection", "gen", "--all")
    assert unconfirmed.returncode == 2 and "add --yes to do it" in unconfirmed.stderr

    everything = warehouse.cli("remove", "--collection", "gen", "--all", "--yes")
    assert everything.returncode == 0, everything.stderr
    assert warehouse.rows("select count(*) from raw.qrels where collection_id = 'gen'") == [(0,)]
    assert warehouse.cli("build").returncode == 0
    assert served(warehouse, RUNS) == [("docent", "keyword_overlap")]
    assert served(warehouse, "select distinct collection_id from run_leaderboard") == [("docent",)]
    assert warehouse.rows("select collection_id, run_id, removed from raw.removals order by removed_at") == [
        ("gen", "run1", "run"), ("gen", None, "collection")]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--collection", "gen", "--run-id", "nope"], "collection 'gen' has no run 'nope' (its runs: run0, run1)"),
        (["--collection", "nowhere", "--all", "--yes"],
         "the warehouse has no collection 'nowhere'; the warehouse's collections: docent, gen"),
        (["--collection", "docent", "--judgments"], "docent's judgments are the seeds (seeds/golden_qrels.csv)"),
        (["--collection", "gen"], "one of the arguments --run-id --judgments --all is required"),
        (["--collection", "bad name", "--all", "--yes"], "collection 'bad name' is not a plain identifier"),
    ],
)
def test_what_cannot_be_removed_is_refused_in_one_line(imported: Warehouse, args: list[str], message: str) -> None:
    before = imported.rows("select * from raw.runs order by all")
    result = imported.cli("remove", *args)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert message in result.stderr
    assert imported.rows("select * from raw.runs order by all") == before
