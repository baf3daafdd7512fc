"""The project's dbt-duckdb plugin (profiles.yml `plugins:`): one SQL function on dbt's connection,
`package_digest(modules)`, the hash of the source of the package modules a Python model imports and of every
module of the package they import in turn.

A per-run Python model's fingerprint of a run includes it (macros/incremental_runs.sql, plan_runs): a change to
the code that computes its numbers (the bootstrap's interval rule in retrieval_metrics/stats.py, say), made in the
repo or by installing another version of the package, recomputes every run at the next build; a change to a
module no model imports (the report's) recomputes none. dbt's templates cannot read files; DuckDB calls this
function when the model's plan is made.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
from pathlib import Path

import duckdb
from dbt.adapters.duckdb.plugins import BasePlugin

PACKAGE = "retrieval_metrics"
FUNCTION = "package_digest"


def source_of(module: str) -> bytes:
    """A package module's source, from where Python imports it."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ValueError(f"no module {module!r} to hash")
    return Path(spec.origin).read_bytes()


def is_module(name: str) -> bool:
    """Whether `name` is a module of the package (a file), not a name imported from one."""
    if name.split(".")[0] != PACKAGE:
        return False
    try:
        spec = importlib.util.find_spec(name)
    except ModuleNotFoundError:
        return False
    return spec is not None and spec.origin is not None


def imported_modules(modules: list[str]) -> list[str]:
    """The modules, and every module of the package they import when imported (their top-level imports), directly
    or not, sorted."""
    seen: set[str] = set()
    pending = list(modules)
    while pending:
        module = pending.pop()
        if module in seen:
            continue
        seen.add(module)
        for node in ast.parse(source_of(module)).body:
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            else:
                continue
            pending += [name for name in names if is_module(name)]
    return sorted(seen)


def package_digest(modules: str) -> str:
    """The SQL function: `modules` space-separated (as the model imports them) -> sha256 of each module's name and
    source, over the modules and what of the package they import."""
    digest = hashlib.sha256()
    for module in imported_modules(modules.split()):
        digest.update(module.encode() + b"\0" + source_of(module) + b"\0")
    return digest.hexdigest()


def register(con: duckdb.DuckDBPyConnection) -> None:
    """Define package_digest on a connection (a cursor of dbt's too: each is a connection of its own)."""
    try:
        con.create_function(FUNCTION, package_digest, [duckdb.sqltypes.VARCHAR], duckdb.sqltypes.VARCHAR)
    except duckdb.CatalogException:
        pass  # already there: the cursor shares its connection's catalog


class Plugin(BasePlugin):
    """dbt-duckdb's hooks: the function on dbt's connection and on each cursor dbt takes from it."""

    def configure_connection(self, conn: duckdb.DuckDBPyConnection) -> None:
        register(conn)

    def configure_cursor(self, cursor: duckdb.DuckDBPyConnection) -> None:
        register(cursor)
