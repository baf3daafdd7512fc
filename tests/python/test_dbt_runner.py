"""The in-process build's one reach into dbt-duckdb beyond its documented settings: release_database() closes the
file the profile's keep_open holds after a dbt command (docs/speed.md says why it stays). These tests fail if a
dbt or dbt-duckdb upgrade breaks it: the file held after a command, released by release_database(), opened again
by the next command in the same process on the parse it reused (dbtRunner(manifest=)), and run_results.json
written by dbt, which node_failures reads. They run on a generated one-model project, not the repo's."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest
from dbt.cli.main import dbtRunner

from retrieval_metrics.dbt_runner import InProcessDbt, node_failures, release_database

pytestmark = pytest.mark.dbt


@pytest.fixture
def one_model_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A one-model dbt-duckdb project whose profile keeps the file open, as the repo's does, made the project
    dbt_runner runs (DBT_PROJECT_DIR), with its own target and log directories; the database file it builds."""
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text("name: one\nversion: '1.0'\nprofile: one\nmodel-paths: [models]\n")
    (project / "profiles.yml").write_text(
        "one:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n"
        "      path: \"{{ env_var('RETRIEVAL_DB') }}\"\n      threads: 2\n      keep_open: true\n"
    )
    (project / "models" / "one.sql").write_text("select 1 as x\n")
    (project / "models" / "two.sql").write_text("select x + 1 as x from {{ ref('one') }}\n")
    database = tmp_path / "one.duckdb"
    for name, value in [("DBT_PROJECT_DIR", project), ("DBT_TARGET_PATH", tmp_path / "target"),
                        ("DBT_LOG_PATH", tmp_path / "logs"), ("RETRIEVAL_DB", database)]:  # fmt: skip
        monkeypatch.setenv(name, str(value))  # restored after the test, whatever InProcessDbt sets
    monkeypatch.delenv("DBT_TARGET", raising=False)
    return database


def opens_in_another_process(database: Path) -> bool:
    """Whether another process can open the file for writing (DuckDB's lock refuses it while one holds it)."""
    code = "import duckdb, sys; duckdb.connect(sys.argv[1]).close()"
    return subprocess.run([sys.executable, "-c", code, str(database)], capture_output=True, check=False).returncode == 0


def test_release_database_frees_the_file_dbt_duckdb_keeps_open(one_model_project: Path) -> None:
    """keep_open holds the file after a dbt command in this process (why release_database exists); after it,
    another process can write the file and this one can open it with another configuration."""
    database = one_model_project
    project = database.parent / "project"
    result = dbtRunner().invoke(["build", "--project-dir", str(project), "--profiles-dir", str(project), "--quiet"])
    assert result.success, result.exception
    try:
        assert not opens_in_another_process(database), "dbt-duckdb no longer holds the file after a command"
    finally:
        release_database()
    assert opens_in_another_process(database), "release_database() left the file open"
    with duckdb.connect(str(database), read_only=True) as con:
        assert con.execute("select x from two").fetchall() == [(2,)]
    release_database()  # again, with the file closed already: nothing to do


def test_the_next_build_in_the_process_reopens_the_file_and_writes_run_results(one_model_project: Path) -> None:
    """The notebook's loop: dbt loaded once (the parse reused by each build), two builds, the file released after
    each, and dbt's run_results.json of each build where node_failures reads it."""
    database = one_model_project
    dbt = InProcessDbt(database)
    dbt.load()
    manifest = dbt.manifest
    for round_number in range(2):
        started = datetime.now(UTC)
        assert dbt.build(["--select", "one+"]).passed
        assert dbt.manifest is manifest
        assert opens_in_another_process(database), f"the file stayed open after build {round_number + 1}"
        results = json.loads((database.parent / "target" / "run_results.json").read_text())
        generated = datetime.fromisoformat(results["metadata"]["generated_at"].replace("Z", "+00:00"))
        assert generated.replace(tzinfo=UTC) >= started.replace(microsecond=0)
        assert sorted(r["unique_id"] for r in results["results"]) == ["model.one.one", "model.one.two"]
        assert node_failures(started, database) == []
        with duckdb.connect(str(database)) as con:  # a writer between two builds, as rm.write_run is
            con.execute("create or replace table raw_rows as select 1 as x")


def test_a_build_runs_on_the_parse_load_made(one_model_project: Path) -> None:
    """dbtRunner(manifest=) builds what `load` parsed, without parsing again (what saves the notebook's next loop
    dbt's parse): a model changed on disk after `load` is built as it was parsed; a new load sees the change."""
    database = one_model_project
    model = database.parent / "project" / "models" / "two.sql"
    dbt = InProcessDbt(database)
    dbt.load()
    model.write_text("select x + 41 as x from {{ ref('one') }}\n")
    assert dbt.build([]).passed
    with duckdb.connect(str(database), read_only=True) as con:
        assert con.execute("select x from two").fetchall() == [(2,)], "dbt parsed the project again"
    dbt.load()
    assert dbt.build([]).passed
    with duckdb.connect(str(database), read_only=True) as con:
        assert con.execute("select x from two").fetchall() == [(42,)]


def test_release_database_before_any_command() -> None:
    """In a process where dbt has not opened a file yet (a build stopped before its first connection), there is
    nothing to release, and release_database() says nothing."""
    code = "from retrieval_metrics.dbt_runner import release_database; release_database(); print('released')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "released"), done.stderr
