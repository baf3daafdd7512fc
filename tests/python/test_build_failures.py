"""A failed build says why: one line per failed node (which test or model, why, the keys of its first offending
rows), then one line naming the log, exit 2 when the input is at fault; a refused setting says which var and
value before dbt starts; --vars that are not YAML, name no var of the project, or a baseline or gated run the warehouse lacks are
refused before dbt starts. The serving copy is left as it was."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from conftest import Warehouse
from retrieval_metrics.dbt_runner import encountered_error, one_line, run_dbt
from retrieval_metrics.serving import publish
from retrieval_metrics.settings import RULES, project_defaults

pytestmark = pytest.mark.dbt


@pytest.fixture
def published(lesson: Warehouse, tmp_path: Path) -> Warehouse:
    warehouse = lesson.copy(tmp_path / "warehouse")
    publish(warehouse.db_path, warehouse.db_path.with_name("serving.duckdb"))
    return warehouse


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("retrieval-metrics build: ")]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ("{k_values: [0]}", "var k_values: [0] holds '0', not a positive integer"),
        ("{k_values: [5, 2147483648]}", "var k_values: [5, 2147483648] holds 2147483648, more than 2147483647"),
        ("{k_values: [-1]}", "var k_values: [-1] holds '-1', not a positive integer"),
        ("{k_values: [1, abc]}", "var k_values: [1, 'abc'] holds 'abc', not a positive integer"),
        ("{k_values: []}", "var k_values: [] is empty: give at least one cutoff"),
        ("{k_values: '1,x'}", "var k_values: '1,x' holds 'x', not a positive integer"),
        ("{averaging: sometimes}", "var averaging: 'sometimes' is not one of all_questions, retrieved_only"),
        ("{relevance_level: abc}", "var relevance_level: 'abc' is not an integer >= 0"),
        ("{relevance_level: 1.5}", "var relevance_level: 1.5 is not an integer >= 0"),
        ("{judged_docs_only: maybe}", "var judged_docs_only: 'maybe' is not true or false"),
        ("{n_permutations: 0}", "var n_permutations: 0 is not an integer >= 1"),
        ("{bootstrap_resamples: -5}", "var bootstrap_resamples: -5 is not an integer >= 1"),
        ("{bootstrap_seed: -1}", "var bootstrap_seed: -1 is not an integer >= 0"),
        ("{bootstrap_seed: 99999999999999999999}", "var bootstrap_seed: 99999999999999999999 is more than 9223372036854775807"),
        ("{baseline_run_id: \"bm25'\"}", "var baseline_run_id: \"bm25'\" is not none or a list of run ids"),
        ("{baseline_run_id: [bm25, bm25]}", "var baseline_run_id: ['bm25', 'bm25'] names bm25 twice"),
        ("{gated_run_ids: [bm25, 'a b']}", "var gated_run_ids: ['bm25', 'a b'] holds 'a b', not a run id"),
    ],
)
def test_a_refused_setting_names_the_var_and_its_value_before_dbt_starts(
    published: Warehouse, settings: str, message: str
) -> None:
    serving = published.db_path.with_name("serving.duckdb")
    before = serving.read_bytes(), published.db_path.read_bytes()
    result = published.cli("build", "--vars", settings)
    assert result.returncode == 2 and result.stdout == ""  # dbt never started
    assert result.stderr.startswith(f"retrieval-metrics build: error: {message}"), result.stderr
    assert result.stderr.count("\n") == 1
    assert (serving.read_bytes(), published.db_path.read_bytes()) == before


def test_every_var_of_the_project_has_a_rule() -> None:
    assert list(RULES) == list(project_defaults())
    assert all(RULES[name](value) is None for name, value in project_defaults().items())


def test_plain_dbt_refuses_a_bad_setting_at_parse_time(published: Warehouse) -> None:
    """Without the command's check (a plain `dbt build`), the project's macros stop dbt before any node runs."""
    before = published.db_path.read_bytes()
    result = run_dbt(["build", "--vars", "{k_values: [0]}"], published.db_path, capture=True)
    assert result.returncode != 0 and "var k_values: [0] holds '0', not a positive integer" in result.stdout
    assert encountered_error(result.stdout) is not None and published.db_path.read_bytes() == before


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ("{k_value: [1]}", "--vars: no var 'k_value' in this project (its vars: k_values, averaging, "),
        ("{baseline_run_id: no_such_run}", "var baseline_run_id: 'no_such_run' is not a run of any collection"),
        ("{baseline_run_id: 'keyword_overlap,no_such_run'}", "var baseline_run_id: 'no_such_run' is not a run of any collection"),
        ("{gated_collection_id: nope}", "var gated_collection_id: 'nope' is not a collection with runs"),
        ("{gated_run_ids: [keyword_overlap, nope]}", "var gated_run_ids: 'nope' is not a run of collection 'docent'"),
    ],
)
def test_vars_naming_what_is_not_there_are_refused_before_dbt_starts(
    published: Warehouse, settings: str, message: str
) -> None:
    result = published.cli("build", "--vars", settings)
    assert result.returncode == 2 and result.stdout == ""  # dbt never started
    assert result.stderr.startswith(f"retrieval-metrics build: error: {message}") and result.stderr.count("\n") == 1


@pytest.mark.parametrize("settings", ["{k_values: [", "[1, 2]"])
def test_vars_that_are_not_a_yaml_mapping_are_refused_before_dbt_starts(published: Warehouse, settings: str) -> None:
    result = published.cli("build", "--vars", settings)
    assert result.returncode == 2 and result.stdout == ""  # dbt printed nothing: it never started
    assert result.stderr.startswith(f"retrieval-metrics build: error: --vars {settings!r} is not ")
    assert result.stderr.count("\n") == 1


def test_a_failed_data_test_names_its_first_offending_rows(published: Warehouse) -> None:
    with duckdb.connect(str(published.db_path)) as con:  # a ranked doc the collection does not have
        con.execute("insert into raw.rankings (collection_id, run_id, question_id, doc_id, rank, score) "
                    "values ('docent', 'keyword_overlap', 'error_401', 'no_such_doc', 9, 0.0)")  # fmt: skip
        con.execute("update raw.runs set run_version = 'edited' where run_id = 'keyword_overlap'")
    serving = published.db_path.with_name("serving.duckdb")
    before = serving.read_bytes()
    result = published.cli("build", "--vars", "{test_all_runs: true}")  # the writers' guarantees checked too
    assert result.returncode == 2
    *nodes, last = error_lines(result.stderr)
    failed = [line for line in nodes if "composite_relationships_stg_raw__rankings_collection_id__doc_id" in line]
    assert len(failed) == 1, nodes
    assert failed[0].startswith("retrieval-metrics build: test composite_relationships_stg_raw__rankings_")
    assert failed[0].endswith(" fail: Got 1 result, configured to fail if != 0; first: collection_id='docent', "
                              "doc_id='no_such_doc'")  # fmt: skip
    assert last.startswith("retrieval-metrics build: error: dbt build failed (")
    assert "fix the rows or the settings named above and build again" in last and "dbt's log: " in last
    assert serving.read_bytes() == before


def test_an_all_pairs_table_of_an_earlier_version_asks_for_a_full_refresh(published: Warehouse) -> None:
    """An incremental Python model whose table lacks a column of this version stops the build naming the column
    and the cure, as dbt stops an incremental SQL model (on_schema_change: fail)."""
    with duckdb.connect(str(published.db_path)) as con:
        con.execute("alter table main.run_pair_tests drop column pair_fingerprint")
    result = published.cli("build", "--force")
    assert result.returncode == 1, result.stderr
    failed = [line for line in error_lines(result.stderr) if "model run_pair_tests error" in line]
    assert len(failed) == 1 and failed[0].endswith(
        'RuntimeError: "warehouse"."main"."run_pair_tests" was built by an earlier version of the model (without '
        "pair_fingerprint): build once with --full-refresh (docs/incremental.md)"), result.stderr  # fmt: skip


def test_a_python_model_that_raised_is_named_with_its_exception() -> None:
    """A Python model's traceback is dozens of lines; its one line keeps what dbt says before it and the exception."""
    message = ("Runtime Error in model run_comparison_tests (models/marts/comparisons/run_comparison_tests.py)\n"
               "  Python model failed:\nTraceback (most recent call last):\n  File \"stats.py\", line 9, in f\n"
               "    return g()\nValueError: operands could not be broadcast together\n")  # fmt: skip
    assert one_line(message) == ("Runtime Error in model run_comparison_tests (models/marts/comparisons/"
                                 "run_comparison_tests.py) Python model failed: ValueError: operands could not be "
                                 "broadcast together")  # fmt: skip
    assert one_line("Database Error\n  in  model x", width=12) == "Database Err"
