"""Incremental builds (docs/incremental.md): a build computes only the runs whose inputs changed, and after any
sequence of imports, replacements, judgment edits, removals and setting changes, the incrementally built
tables equal, value for value and bit for bit, those of a --full-refresh build of the same data."""

from __future__ import annotations

import random
from pathlib import Path

import duckdb
import pytest

from conftest import Warehouse
from test_trec_agreement import make_collection

pytestmark = pytest.mark.dbt

# every table a per-run model fills, and the marts computed from them
PER_RUN_TABLES = [
    "intermediate.int_judged_docs_retrieved", "intermediate.int_run_questions_scaffolded",
    "intermediate.int_run_questions_measured",
    "main.question_measures", "main.question_metrics", "main.run_measures", "main.question_comparisons",
    "main.missed_relevant_docs", "main.run_metrics", "main.run_leaderboard", "main.run_comparisons",
    "main.run_tag_measures", "main.run_tag_comparisons", "main.run_measure_intervals", "main.run_comparison_tests",
    "main.run_pair_tests", "main.measure_anova", "main.run_letter_groups", "main.measure_questions_needed",
]  # fmt: skip
OTHER_SETTINGS = '{"k_values": [1, 5], "relevance_level": 2, "baseline_run_id": "run0"}'
# the lesson's golden values hold at Docent's own settings; these are gen's (the vars: its defaults)
OTHER_BUILD = ("--vars", OTHER_SETTINGS, "--exclude", "tag:lesson_golden")


def snapshot(warehouse: Warehouse) -> dict[str, list[tuple[str, ...]]]:
    """Every row of every per-run table, sorted, each value as its repr (a float's repr gives back its bits); not
    which dbt invocation computed it, nor when."""
    computed = "columns(lambda c: c not in ('invocation_id', 'computed_at'))"
    with warehouse.connect() as con:
        return {
            table: [tuple(map(repr, row)) for row in con.execute(f"select {computed} from {table} order by all").fetchall()]
            for table in PER_RUN_TABLES
        }


def planned(warehouse: Warehouse, model: str = "question_measures") -> list[tuple[str, str]]:
    """The runs `model` computed in the last build (whose start every build stamps on run_means_by_qrels_version)."""
    return [tuple(row) for row in warehouse.rows(  # type: ignore[misc]
        f"select distinct collection_id, run_id from {model} "
        "where computed_at = (select max(computed_at) from run_means_by_qrels_version) order by all")]


def collections_computed(warehouse: Warehouse) -> dict[str, list[str]]:
    """The collections each all-pairs mart computed in the last build (incremental by collection)."""
    last = "(select max(computed_at) from run_means_by_qrels_version)"
    return {model: [c for (c,) in warehouse.rows(f"select distinct collection_id from {model} "
                                                  f"where computed_at = {last} order by all")]
            for model in ("run_pair_tests", "measure_anova")}  # fmt: skip


def assert_equals_full_refresh(warehouse: Warehouse, folder: Path, *vars_: str) -> None:
    """A copy whose per-run tables are computed whole (--full-refresh: every run) has the same rows in each. dbt
    run, not build: the data tests read the tables, they do not write them (the incremental builds ran them); and
    only those tables: what they read is as the last build left it, from the same data and vars."""
    fresh = warehouse.copy(folder)
    fresh.dbt_passed("run", "--full-refresh", "--select", *(table.split(".")[1] for table in PER_RUN_TABLES), *vars_)
    incremental, full = snapshot(warehouse), snapshot(fresh)
    for table in PER_RUN_TABLES:
        assert incremental[table] == full[table], f"{table}: the incremental build differs from a full refresh"


def import_(warehouse: Warehouse, *args: str) -> None:
    result = warehouse.cli("import", "--collection", "gen", *args)
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def history(lesson: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> tuple[Warehouse, Path]:
    folder = tmp_path_factory.mktemp("incremental")
    qrels, runs = make_collection(random.Random(12), folder / "collection", n_runs=4)
    warehouse = lesson.copy(folder / "warehouse")
    assert warehouse.rank("--retriever", "bm25").returncode == 0  # Docent's second run: its pairs
    import_(warehouse, "--qrels", str(qrels), "--run", str(runs[0]), "--run-id", "run0")
    warehouse.built()
    return warehouse, folder


def test_a_new_run_is_the_only_one_computed(history: tuple[Warehouse, Path]) -> None:
    warehouse, folder = history
    assert planned(warehouse) == [("docent", "bm25"), ("gen", "run0")]  # the lesson's run was built before the copy
    _, runs = make_collection(random.Random(12), folder / "again", n_runs=4)
    import_(warehouse, "--run", str(runs[1]), "--run-id", "run1")
    warehouse.built()
    assert planned(warehouse) == [("gen", "run1")]
    # gen's pairs (it has two runs now), not Docent's (its keyword_overlap and bm25 unchanged)
    assert collections_computed(warehouse) == {"run_pair_tests": ["gen"], "measure_anova": ["gen"]}
    assert warehouse.rows("select distinct collection_id from run_pair_tests order by all") == [("docent",), ("gen",)]
    # nothing changed: dbt is not started (dbt's own no-op: test_scoped_tests_check_only_the_runs_computed)
    assert "nothing to build" in warehouse.cli("build").stdout


def test_incremental_builds_equal_a_full_refresh(history: tuple[Warehouse, Path], tmp_path: Path) -> None:
    warehouse, folder = history
    _, runs = make_collection(random.Random(12), folder / "runs", n_runs=4)
    qrels, other_runs = make_collection(random.Random(99), folder / "edited", n_runs=2)
    import_(warehouse, "--run", str(runs[2]), "--run-id", "run2")
    import_(warehouse, "--run", str(runs[3]), "--run-id", "keyword_overlap")  # the baseline: gen's runs compared
    assert warehouse.cli("settings", "--collection", "gen", "--set", "baseline_run_id=keyword_overlap").returncode == 0
    warehouse.built()
    # every run against the new baseline (the baseline has no rows of its own there)
    assert planned(warehouse, "question_comparisons") == [("gen", run) for run in ["run0", "run1", "run2"]]
    import_(warehouse, "--run", str(other_runs[0]), "--run-id", "run2")  # a replaced run
    warehouse.built()
    assert planned(warehouse) == [("gen", "run2")]
    assert_equals_full_refresh(warehouse, tmp_path / "after-replacement")

    import_(warehouse, "--qrels", str(qrels))  # edited judgments: the collection's runs, not the lesson's
    warehouse.built()
    assert planned(warehouse) == [("gen", run) for run in ["keyword_overlap", "run0", "run1", "run2"]]
    with duckdb.connect(str(warehouse.db_path)) as con:  # a run removed from the raw tables
        con.execute("delete from raw.rankings where run_id = 'run1'")
        con.execute("delete from raw.runs where run_id = 'run1'")
    tags = folder / "tags.tsv"  # and new question tags: every run of gen again (run1 is gone)
    tags.write_text("".join(f"q{i} {'low' if i < 12 else 'high'}\nq{i} all\n" for i in range(22)))
    import_(warehouse, "--tags", str(tags))
    warehouse.built()
    assert planned(warehouse) == [("gen", run) for run in ["keyword_overlap", "run0", "run2"]]
    assert warehouse.rows("select count(*) from question_measures where run_id = 'run1'") == [(0,)]
    assert warehouse.rows("select count(distinct tag) from run_tag_comparisons where collection_id = 'gen'") == [(3,)]
    assert_equals_full_refresh(warehouse, tmp_path / "after-edits")

    # a second baseline: every run of gen compared again (run0 with keyword_overlap too), nothing measured again;
    # another alpha: gen's all-pairs marts again, Docent's not
    assert warehouse.cli("settings", "--collection", "gen", "--set", "baseline_run_id=keyword_overlap,run0",
                         "--set", "alpha=0.1").returncode == 0  # fmt: skip
    warehouse.built()
    assert planned(warehouse) == [] and planned(warehouse, "run_measure_intervals") == []
    assert collections_computed(warehouse) == {"run_pair_tests": ["gen"], "measure_anova": ["gen"]}
    assert warehouse.rows("select distinct alpha from measure_anova where collection_id = 'gen'") == [(0.1,)]
    for model in ("question_comparisons", "run_comparison_tests"):
        assert planned(warehouse, model) == [("gen", run) for run in ["keyword_overlap", "run0", "run2"]], model
    assert warehouse.rows("select distinct baseline_run_id, run_id from run_comparisons where collection_id = 'gen' "
                          "order by all") == [("keyword_overlap", "run0"), ("keyword_overlap", "run2"),
                                              ("run0", "keyword_overlap"), ("run0", "run2")]  # fmt: skip
    assert_equals_full_refresh(warehouse, tmp_path / "two-baselines")

    assert warehouse.cli("settings", "--collection", "gen", "--unset", "baseline_run_id").returncode == 0
    warehouse.build(*OTHER_BUILD)  # defaults that change numbers: every run of gen again, none of Docent (its own)
    assert planned(warehouse) == [("gen", run) for run in ["keyword_overlap", "run0", "run2"]]
    assert_equals_full_refresh(warehouse, tmp_path / "other-settings", *OTHER_BUILD)

    with duckdb.connect(str(warehouse.db_path)) as con:  # one run left in gen: no pair to compare
        con.execute("delete from raw.rankings where run_id <> 'run0' and collection_id = 'gen'")
        con.execute("delete from raw.runs where run_id <> 'run0' and collection_id = 'gen'")
    warehouse.build(*OTHER_BUILD)
    for model in ("run_pair_tests", "measure_anova", "run_letter_groups", "measure_questions_needed"):
        assert warehouse.rows(f"select count(*) from {model} where collection_id = 'gen'") == [(0,)], model


def test_scoped_tests_check_only_the_runs_computed(history: tuple[Warehouse, Path]) -> None:
    """A duplicate (question, doc) slipped into a stored run is not re-checked by a build that does not
    compute that run, and is found by one that checks every run (test_all_runs)."""
    warehouse, folder = history
    copy = warehouse.copy(folder / "scoped")
    with duckdb.connect(str(copy.db_path)) as con:
        con.execute("insert into raw.rankings select * from raw.rankings where run_id = 'run0' limit 1")
    copy.build(*OTHER_BUILD)  # nothing to compute (the last build had these settings): nothing checked
    assert planned(copy) == []
    result = copy.dbt("build", "--vars", OTHER_SETTINGS.replace("{", '{"test_all_runs": true, ', 1),
                      "--exclude", "tag:lesson_golden")
    failures = [r.node.name for r in result.result if str(r.status) == "fail"]
    assert any(name.startswith("primary_key_stg_raw__rankings") for name in failures), failures
