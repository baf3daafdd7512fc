"""What a build runs (retrieval_metrics/up_to_date.py): nothing when its inputs are the last good build's, only
what depends on the changed raw tables when only raw rows changed, everything otherwise; a plain dbt build
drops the record."""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import pytest

from conftest import Warehouse, cli_env, run_cli
from retrieval_metrics import api, up_to_date
from retrieval_metrics.warehouse import source_line
from test_serving import digest, served


def read_line(serving: Path) -> str:
    """What a reader of the serving copy is told it reads."""
    with duckdb.connect(str(serving), read_only=True) as con:
        return source_line(con, serving)


def nodes_run(target: Path) -> set[str]:
    return {result["unique_id"] for result in json.loads((target / "run_results.json").read_text())["results"]}


@pytest.mark.dbt
def test_a_build_runs_what_changed_and_nothing_else(lesson: Warehouse, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    warehouse = lesson.copy(tmp_path)
    build, serving, env = warehouse.db_path, tmp_path / "serving.duckdb", cli_env(warehouse.db_path)
    target = Path(env["DBT_TARGET_PATH"])
    assert up_to_date.last_build(build) is not None  # the fixture's build, recorded: a copy elsewhere keeps it
    first = run_cli("build", env=env)  # nothing to build; this copy's serving copy is missing: published, no dbt
    assert first.stdout.startswith("retrieval-metrics build: published ") and "dbt=" not in first.stdout, first.stdout
    forced = run_cli("build", "--force", env=env)
    assert "published" in forced.stdout, forced.stdout + forced.stderr
    # the build's record is written before it publishes: readers are not told the build file changed since
    assert "has been written since" not in read_line(serving)
    whole = nodes_run(target)
    assert {"seed.retrieval_metrics.docs", "model.retrieval_metrics.int_ideal_rankings"} <= whole

    # nothing new: no dbt, nothing written
    before = ((target / "run_results.json").stat().st_mtime_ns, serving.stat().st_ino, digest(serving), digest(build))
    again = run_cli("build", env=env)
    assert again.returncode == 0 and again.stderr == "", again.stderr
    assert again.stdout.startswith("retrieval-metrics build: nothing to build: the project, settings and raw tables "
                                   "are unchanged since the last build (")  # fmt: skip
    assert ((target / "run_results.json").stat().st_mtime_ns, serving.stat().st_ino, digest(serving),
            digest(build)) == before  # fmt: skip

    # a new run: what depends on raw.runs and raw.rankings, with their tests; then a forced whole build agrees
    api.write_run("docent", "notebook_run", [("rate_limit_status", "ratelimits", 2.0),
                                             ("rate_limit_status", "plans", 1.0)], database=build)  # fmt: skip
    added = run_cli("build", env=env)
    assert "published" in added.stdout, added.stdout + added.stderr
    selected = nodes_run(target)
    assert "model.retrieval_metrics.question_measures" in selected
    assert any(node.startswith("test.retrieval_metrics.") for node in selected)
    assert not any(node.startswith("seed.") for node in selected)
    assert "model.retrieval_metrics.int_ideal_rankings" not in selected and len(selected) < len(whole)
    assert "model.retrieval_metrics.int_judge_question_measures" not in selected  # no automatic judge: empty
    # the views stand as the last build made them; the tests on them run (the new run's questions are known)
    assert "model.retrieval_metrics.stg_raw__rankings" not in selected
    assert "test.retrieval_metrics.assert_run_questions_are_known" in selected
    incremental = served(serving)
    assert ("docent", "notebook_run") in {row[:2] for row in duckdb.connect(str(serving), read_only=True).execute(
        "select collection_id, run_id from run_metrics").fetchall()}  # fmt: skip
    # with vars (their defaults: the same numbers), a whole build, forced, and recorded with them
    settings = ["--vars", "{max_outranking_docs_listed: 10}"]
    forced = run_cli("build", "--force", "--verbose", *settings, env=env, child=True)  # dbt's lines (a child's stdout)
    assert "published" in forced.stdout and nodes_run(target) == whole, forced.stdout + forced.stderr
    assert "Running with dbt=" in forced.stdout and " Done. PASS=" in forced.stdout, forced.stdout[-2000:]
    assert served(serving) == incremental

    # import --build with the recorded build's vars: what reads the imported run, and the record kept up to date
    run = tmp_path / "imported.txt"
    run.write_text("rate_limit_status Q0 plans 1 2.0 mine\nrate_limit_status Q0 ratelimits 2 1.0 mine\n")
    imported = run_cli("import", "--collection", "docent", "--run", str(run), "--run-id", "imported", "--build",
                       *settings, env=env)  # fmt: skip
    assert imported.returncode == 0 and "published" in imported.stdout, imported.stdout + imported.stderr
    assert not any(node.startswith(("seed.", "model.retrieval_metrics.stg_")) for node in nodes_run(target))
    assert "has been written since" not in read_line(serving)
    assert "nothing to build" in run_cli("build", *settings, env=env).stdout

    # the fingerprint, part by part (in the commands' environment, which it holds)
    for name in [name for name in os.environ if name.startswith(("DBT_", "RETRIEVAL_"))]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    recorded = up_to_date.last_build(build)
    assert recorded and up_to_date.build_inputs(build, settings) == recorded[0]
    assert up_to_date.build_inputs(build, []).base != recorded[0].base
    assert up_to_date.serving_is_current(build, serving)
    assert up_to_date.build_inputs(build, ["--vars", "{k_values: [5]}"]).base != recorded[0].base
    one_run = "where run_id = 'notebook_run'"
    with duckdb.connect(str(build)) as con:  # a raw row changed: the runs, and so the rankings read through them
        con.execute(f"update raw.runs set retriever = retriever || '!' {one_run}")
    changed = up_to_date.build_inputs(build, settings)
    assert changed.base == recorded[0].base and changed.changed_raw_tables(recorded[0]) == ["runs", "rankings"]
    with duckdb.connect(str(build)) as con:
        con.execute(f"update raw.runs set retriever = rtrim(retriever, '!') {one_run}")
    with duckdb.connect(str(build)) as con:  # a raw table's columns are the base's: the staging views read them
        con.execute("alter table raw.runs add column added integer")
    assert up_to_date.build_inputs(build, settings).base != recorded[0].base
    with duckdb.connect(str(build)) as con:
        con.execute("alter table raw.runs drop column added")
    assert up_to_date.build_inputs(build, settings) == recorded[0]
    # the serving copy is current while its record names the build file as it is: written since (the updates
    # above), or gone, a build publishes it again, without dbt
    ran_before = (target / "run_results.json").stat().st_mtime_ns
    for make_stale in (lambda: None, serving.unlink):
        make_stale()
        assert not up_to_date.serving_is_current(build, serving)
        republished = run_cli("build", *settings, env=env)
        assert "published" in republished.stdout and up_to_date.serving_is_current(build, serving), republished.stdout
    assert (target / "run_results.json").stat().st_mtime_ns == ran_before

    # a plain dbt build drops the record: the next `build` is whole
    warehouse.build("--select", "run_metrics")
    assert up_to_date.last_build(build) is None


def test_the_project_files_are_in_the_fingerprint(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "tests" / "python").mkdir(parents=True)
    (tmp_path / "models" / "a.sql").write_text("select 1")
    first = up_to_date.files_digest(tmp_path)
    (tmp_path / "tests" / "python" / "test_x.py").write_text("pass")  # not read by dbt
    assert up_to_date.files_digest(tmp_path) == first
    (tmp_path / "models" / "a.sql").write_text("select 2")
    assert up_to_date.files_digest(tmp_path) != first


def test_neither_the_folder_nor_the_serving_copy_is_an_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy of the file elsewhere, under the same name, or published elsewhere, has the same inputs; another name
    (dbt's name of the database) does not."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for path in (tmp_path / "a" / "w.duckdb", tmp_path / "b" / "w.duckdb", tmp_path / "b" / "v.duckdb"):
        duckdb.connect(str(path)).execute("create schema raw; create table raw.runs (run_id varchar)").close()
    monkeypatch.delenv("RETRIEVAL_SERVING_DB", raising=False)
    first = up_to_date.build_inputs(tmp_path / "a" / "w.duckdb", [])
    monkeypatch.setenv("RETRIEVAL_SERVING_DB", str(tmp_path / "elsewhere.duckdb"))
    assert up_to_date.build_inputs(tmp_path / "b" / "w.duckdb", []) == first
    assert up_to_date.build_inputs(tmp_path / "b" / "v.duckdb", []).base != first.base


def test_own_selections_are_never_narrowed() -> None:
    assert up_to_date.selects_nodes(["--select", "run_metrics"]) and up_to_date.selects_nodes(["--exclude=x"])
    assert not up_to_date.selects_nodes(["--vars", "{k_values: [1]}", "--full-refresh"])
    assert up_to_date.take_force(["--force", "--full-refresh"]) == (["--full-refresh"], True)


def test_the_raw_sources_are_the_tables_spark_publishes() -> None:
    """Two lists of the raw tables the models read: the dbt sources (what a build selects from) and Spark's."""
    from retrieval_metrics.building import raw_sources
    from retrieval_metrics.spark import RAW_TABLES

    assert raw_sources() == set(RAW_TABLES)
