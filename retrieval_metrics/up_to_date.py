"""What a build has to do: the fingerprint of everything a DuckDB build reads, compared with the one recorded by
the last good build of the same warehouse (`build_state.last_build`; docs/incremental.md#what-a-build-runs).

A build reads the project (its models, macros, seeds, tests and settings files, and this package, which the
Python models import), the dbt arguments and the environment, the versions of dbt, DuckDB and the libraries the
models call, and the warehouse's raw tables; it writes the warehouse's other tables. All of it but the raw
tables' rows is the `base` of the fingerprint (the warehouse by its file's name, not its folder: a copy elsewhere
keeps the record); the raw tables' rows are digested table by table. The serving copy is not an input: a build
with nothing to compute publishes it when its own record says it does not hold the build (serving_is_current).

- Everything as the last good build left it: the same build would give the same bytes, so `retrieval-metrics
  build` says so and stops, without starting dbt.
- Only raw rows changed, and the build selects nothing itself: dbt builds what depends on the changed raw
  tables (`--select source:raw.<table>+` for each), with their tests; every other node would compute what it
  holds already from inputs the last build tested.
- Anything else: the whole build. So is `build --force`.

Any dbt build or run of the warehouse, ours or a plain `dbt build`, drops the record first (the on-run-start
hook `forget_last_build`), and only a good `retrieval-metrics build` writes it again, after publishing: after a
failed or outside build, the next one is whole. The raw rankings are digested through `raw.runs.run_version`
(new at every write of a run's rankings, as the incremental models rely on), not row by row.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import duckdb

from retrieval_metrics.warehouse import connect

RECORD = "build_state.last_build"
FORCE = "--force"
PROJECT_FOLDERS = {"models": None, "macros": None, "seeds": None, "tests": (".sql", ".yml", ".yaml")}
PROJECT_FILES = ("dbt_project.yml", "profiles.yml", "selectors.yml")
LIBRARIES = ("dbt-core", "dbt-adapters", "dbt-duckdb", "duckdb", "numpy", "scipy", "pandas")
NOT_INPUTS = {  # where dbt writes its artifacts and logs, how it prints, the database (in the base by name), and
    "RETRIEVAL_DB", "RETRIEVAL_SERVING_DB",  # where the build is published (serving_is_current asks the copy)
    "DBT_TARGET_PATH", "DBT_LOG_PATH", "DBT_LOG_LEVEL", "DBT_LOG_LEVEL_FILE", "DBT_LOG_FORMAT", "DBT_LOG_FORMAT_FILE",
    "DBT_USE_COLORS", "DBT_USE_COLORS_FILE", "DBT_PRINTER_WIDTH", "DBT_QUIET", "DBT_PRINT", "DBT_DEBUG",
    "DBT_SEND_ANONYMOUS_USAGE_STATS", "DBT_PARTIAL_PARSE", "DBT_LOG_CACHE_EVENTS", "DBT_WRITE_JSON",
}  # fmt: skip
BY_RUN_VERSION = {"rankings": "runs"}  # digested through raw.runs.run_version, not row by row
SELECTING = ("-s", "--select", "--exclude", "--selector", "--resource-type", "--resource-types",
             "--exclude-resource-type", "--exclude-resource-types", "-m", "--models", "--inline")  # fmt: skip


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


@dataclass(frozen=True)
class Inputs:
    """A build's inputs: everything but the raw tables' rows (`base`, hashed), and each raw table's rows."""

    base: str
    raw_rows: dict[str, str]

    def changed_raw_tables(self, last: Inputs) -> list[str]:
        """The raw tables whose rows differ from `last`'s (a table gone or new changes the base instead)."""
        changed = [table for table, rows in sorted(self.raw_rows.items()) if last.raw_rows.get(table) != rows]
        return changed + [table for table, through in BY_RUN_VERSION.items() if through in changed]


def raw_rows(con: duckdb.DuckDBPyConnection, tables: list[str]) -> dict[str, str]:
    """Each raw table's rows as a count and a sum of row hashes (order-free; a duplicate row counts twice)."""
    digests = {}
    for table in tables:
        if table not in BY_RUN_VERSION:
            count, total = con.execute(f'select count(*), sum(hash(t))::varchar from "raw"."{table}" as t').fetchone()
            digests[table] = f"{count}:{total}"
    return digests


def build_inputs(database: Path, dbt_args: Sequence[str]) -> Inputs:
    """The inputs of the build `dbt build DBT_ARGS` of `database`. Its folder is not one: a copy of the file
    elsewhere, under the same name, builds the same tables. Nor is the serving copy: whether it holds the last
    build, serving_is_current asks its publication record."""
    from retrieval_metrics.dbt_runner import project_dir

    versions = {}
    for library in LIBRARIES:
        try:
            versions[library] = metadata.version(library)
        except metadata.PackageNotFoundError:
            versions[library] = None
    with connect(database, read_only=True) as con:
        relations = con.execute(
            "select schema_name, table_name, 'table' from duckdb_tables() where database_name = current_database() "
            "union all select schema_name, view_name, 'view' from duckdb_views() "
            "where database_name = current_database() and not internal order by all").fetchall()  # fmt: skip
        rows = raw_rows(con, [table for schema, table, kind in relations if schema == "raw" and kind == "table"])
        raw_columns = con.execute(
            "select table_name, column_name, data_type from duckdb_columns() "
            "where database_name = current_database() and schema_name = 'raw' order by all").fetchall()  # fmt: skip
    base = {
        "database": database.name,  # its stem is dbt's name of the database; a copy elsewhere keeps the record
        "project": files_digest(project_dir()),
        "arguments": list(dbt_args),
        "environment": sorted((k, v) for k, v in os.environ.items()
                              if k.startswith(("DBT_", "RETRIEVAL_")) and k not in NOT_INPUTS),  # fmt: skip
        "python": sys.version,
        "versions": versions,
        "relations": [row for row in relations if f"{row[0]}.{row[1]}" != RECORD],
        "raw_columns": raw_columns,  # the staging views read them (a build that selects keeps its views)
    }
    return Inputs(hashlib.sha256(json.dumps(base, sort_keys=True).encode()).hexdigest(), rows)


def selects_nodes(dbt_args: Sequence[str]) -> bool:
    """Whether dbt arguments select nodes themselves (then a build never narrows them further)."""
    return any(arg == flag or arg.startswith(flag + "=") for arg in dbt_args for flag in SELECTING)


def serving_is_current(database: Path, serving: Path) -> bool:
    """Whether `serving` is the publication of `database` as it is now: its record names the file and the
    modification time it was published from (serving.publish). A build database written since, or a serving
    copy missing, unreadable or replaced by hand, is not current."""
    from retrieval_metrics.warehouse import PUBLICATION, written_at

    if not (serving.exists() and database.exists()):
        return False
    try:
        with connect(serving, read_only=True) as con:
            row = con.execute(f"select build_database, build_written_at from {PUBLICATION}").fetchone()
    except duckdb.Error:
        return False
    return row == (str(database.absolute()), written_at(database))


def last_build(database: Path) -> tuple[Inputs, datetime] | None:
    """The inputs the last good build recorded, and when it finished; None before the first, or after a failed
    or outside dbt build."""
    if not database.exists():
        return None
    with connect(database, read_only=True) as con:
        recorded = con.execute("select count(*) from duckdb_tables() where database_name = current_database() "
                               "and schema_name || '.' || table_name = ?", [RECORD]).fetchone()
        try:
            row = con.execute(f"select base, raw_rows, built_at from {RECORD}").fetchone() if recorded[0] else None
        except duckdb.BinderException:  # a record in another layout: none
            row = None
    return (Inputs(row[0], json.loads(row[1])), row[2].replace(tzinfo=UTC)) if row else None


def record_build(database: Path, inputs: Inputs) -> None:
    """Record a good build's inputs (taken once its tables and serving copy are written)."""
    with connect(database) as con:
        con.execute("create schema if not exists build_state")
        con.execute(f"create or replace table {RECORD} (base varchar not null, raw_rows varchar not null, "
                    "built_at timestamp not null)")  # fmt: skip
        con.execute(f"insert into {RECORD} values (?, ?, ?)",
                    [inputs.base, json.dumps(inputs.raw_rows, sort_keys=True), datetime.now(UTC).replace(tzinfo=None)])
