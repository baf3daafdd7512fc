"""Shared fixtures: every test gets its own temporary DuckDB file; dbt runs in-process via dbtRunner."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from dbt.cli.main import dbtRunner, dbtRunnerResult

REPO_ROOT = Path(__file__).resolve().parents[2]
PROJECT_FILES = ["dbt_project.yml", "profiles.yml", "models", "macros", "seeds", "tests/generic", "tests/marts", "scripts"]


class Warehouse:
    """A dbt project directory plus its own DuckDB file."""

    def __init__(self, project_dir: Path, db_path: Path, target_dir: Path) -> None:
        self.project_dir = project_dir
        self.db_path = db_path
        self.target_dir = target_dir

    def rank(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run scripts/rank.py as a user would, against this warehouse's database."""
        return subprocess.run(
            [sys.executable, str(self.project_dir / "scripts" / "rank.py"), *args],
            capture_output=True,
            text=True,
            env={**os.environ, "RETRIEVAL_DB": str(self.db_path)},
            check=False,
        )

    def dbt(self, *args: str) -> dbtRunnerResult:
        os.environ["RETRIEVAL_DB"] = str(self.db_path)
        return dbtRunner().invoke(
            [
                *args,
                "--project-dir", str(self.project_dir),
                "--profiles-dir", str(self.project_dir),
                "--target-path", str(self.target_dir),
                "--log-path", str(self.target_dir / "logs"),
                "--quiet",
                "--target", "in_process",
            ]
        )

    def build(self, *args: str) -> dbtRunnerResult:
        """dbt build; fails the test on any node that errored or failed."""
        result = self.dbt("build", *args)
        failed = [
            f"{r.node.unique_id}: {r.status} {r.message}"
            for r in (result.result or [])
            if str(r.status) in {"error", "fail", "runtime error"}
        ]
        assert result.success and not failed, f"dbt build failed: {failed or result.exception}"
        return result

    def connect(self) -> duckdb.DuckDBPyConnection:
        return duckdb.connect(str(self.db_path), read_only=True)

    def rows(self, sql: str, params: list[object] | None = None) -> list[tuple[object, ...]]:
        with self.connect() as con:
            return con.execute(sql, params or []).fetchall()


@pytest.fixture(scope="session")
def dbt_target_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("dbt-target")


@pytest.fixture
def warehouse(tmp_path: Path, dbt_target_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Warehouse]:
    """The repo's project against an empty temporary database: never the user's retrieval.duckdb."""
    monkeypatch.setenv("RETRIEVAL_DB", str(tmp_path / "warehouse.duckdb"))
    yield Warehouse(REPO_ROOT, tmp_path / "warehouse.duckdb", dbt_target_dir)


@pytest.fixture
def project_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Warehouse]:
    """A private copy of the project (to edit seeds in) with its own database and target directory."""
    project = tmp_path / "project"
    for name in PROJECT_FILES:
        source = REPO_ROOT / name
        if source.is_dir():
            shutil.copytree(source, project / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (project / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, project / name)
    monkeypatch.setenv("RETRIEVAL_DB", str(tmp_path / "copy.duckdb"))
    yield Warehouse(project, tmp_path / "copy.duckdb", tmp_path / "target")
