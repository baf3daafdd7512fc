"""Whether a build has anything to do: the fingerprint of everything a DuckDB build reads, compared with the one
recorded by the last good build of the same warehouse (`build_state.last_build`).

A build reads the project (its models, macros, seeds, tests and settings files, and this package, which the
Python models import), the dbt arguments and the environment, the versions of dbt, DuckDB and the libraries the
models call, and the warehouse's raw tables; it writes the warehouse's other tables and the serving copy. When
all of that is as the last good build left it, the same build would give the same bytes (docs/incremental.md),
so `retrieval-metrics build` says so and stops, without starting dbt. `build --force` builds anyway.

The raw tables are read whole, except the rankings: a write of a run's rankings always gives the run a new
`raw.runs.run_version` (the same fact the incremental models rely on), and `raw.runs` is read whole.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from retrieval_metrics.warehouse import connect

RECORD = "build_state.last_build"
FORCE = "--force"
PROJECT_FOLDERS = {"models": None, "macros": None, "seeds": None, "tests": (".sql", ".yml", ".yaml")}
PROJECT_FILES = ("dbt_project.yml", "profiles.yml", "selectors.yml")
LIBRARIES = ("dbt-core", "dbt-adapters", "dbt-duckdb", "duckdb", "numpy", "scipy", "pandas")
BY_RUN_VERSION = {("raw", "rankings")}  # read through raw.runs.run_version, not row by row


def take_force(dbt_args: Sequence[str]) -> tuple[list[str], bool]:
    """build's own --force, taken out of the arguments it passes to dbt."""
    rest = [arg for arg in dbt_args if arg != FORCE]
    return rest, len(rest) != len(dbt_args)


def files_digest(project: Path) -> str:
    """The project's files (path and bytes) and this package's source, hashed."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    paths = [project / name for name in PROJECT_FILES if (project / name).is_file()]
    for folder, suffixes in PROJECT_FOLDERS.items():
        paths += [p for p in (project / folder).rglob("*") if p.is_file() and (suffixes is None or p.suffix in suffixes)]
    paths += package.glob("*.py")
    for path in sorted(paths):
        root = package if path.is_relative_to(package) else project
        digest.update(f"{path.relative_to(root)}\0{path.stat().st_size}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def warehouse_state(database: Path) -> list[list[object]]:
    """Every table and view of the warehouse by name, and the raw tables' rows as a count and a sum of row hashes
    (order-free; a duplicate row counts twice)."""
    with connect(database, read_only=True) as con:
        relations = con.execute(
            "select schema_name, table_name, 'table' from duckdb_tables() where database_name = current_database() "
            "union all select schema_name, view_name, 'view' from duckdb_views() "
            "where database_name = current_database() and not internal order by all").fetchall()  # fmt: skip
        state: list[list[object]] = [list(row) for row in relations if f"{row[0]}.{row[1]}" != RECORD]
        for schema, table, kind in relations:
            if schema == "raw" and kind == "table" and (schema, table) not in BY_RUN_VERSION:
                count, total = con.execute(f'select count(*), sum(hash(t))::varchar from "raw"."{table}" as t').fetchone()
                state.append([table, count, total])
    return state


def build_inputs(database: Path, serving: Path, dbt_args: Sequence[str]) -> str:
    """The fingerprint of the build `dbt build DBT_ARGS` of `database` would run, and of its serving copy."""
    from retrieval_metrics.dbt_runner import project_dir

    versions = {}
    for library in LIBRARIES:
        try:
            versions[library] = metadata.version(library)
        except metadata.PackageNotFoundError:
            versions[library] = None
    environment = {k: v for k, v in os.environ.items() if k.startswith(("DBT_", "RETRIEVAL_"))}
    published = serving.stat() if serving.exists() else None
    inputs = {
        "project": files_digest(project_dir()),
        "arguments": list(dbt_args),
        "environment": sorted(environment.items()),
        "python": sys.version,
        "versions": versions,
        "warehouse": warehouse_state(database),
        "serving": [str(serving), published.st_size, published.st_mtime_ns] if published else None,
    }
    return hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode()).hexdigest()


def last_build(database: Path) -> tuple[str, datetime] | None:
    """The fingerprint the last good build recorded, and when it finished; None before the first."""
    if not database.exists():
        return None
    with connect(database, read_only=True) as con:
        recorded = con.execute("select count(*) from duckdb_tables() where database_name = current_database() "
                               "and schema_name || '.' || table_name = ?", [RECORD]).fetchone()
        row = con.execute(f"select fingerprint, built_at from {RECORD}").fetchone() if recorded[0] else None
    return (row[0], row[1].replace(tzinfo=UTC)) if row else None


def record_build(database: Path, fingerprint: str) -> None:
    """Record a good build's fingerprint (taken once its tables and serving copy are written)."""
    with connect(database) as con:
        con.execute("create schema if not exists build_state")
        con.execute(f"create or replace table {RECORD} (fingerprint varchar not null, built_at timestamp not null)")
        con.execute(f"insert into {RECORD} values (?, ?)", [fingerprint, datetime.now(UTC).replace(tzinfo=None)])
