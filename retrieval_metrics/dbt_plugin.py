"""The project's dbt-duckdb plugin (profiles.yml `plugins:`): one SQL function on dbt's connection,
`code_digest(model)`, the hash of the code that computes a model's rows:

- the model's file and the file of every model it reads, directly or not (found by their `ref('...')`), and the
  models the macros read;
- every macro file and dbt_project.yml;
- for the Python models among them, the package modules they import and every module of the package those
  import in turn.

A per-run model's fingerprint of a run includes it (macros/incremental_runs.sql): a change to the code that computes
its numbers (the bootstrap's interval rule in retrieval_metrics/stats.py, a model's SQL, a measure's macro), made in
the repo or by installing another version of the package, recomputes every run at the next build; a change to a
module or model it does not read (the report's) recomputes none. dbt's templates cannot read files, so the
macro code_digest asks DuckDB for it when the model runs; the Python models call `code_digest` directly.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import re
import threading
from pathlib import Path

import duckdb
from dbt.adapters.duckdb.plugins import BasePlugin

PACKAGE = "retrieval_metrics"
FUNCTION = "code_digest"
REF = re.compile(r"""\bref\(\s*['"]([A-Za-z0-9_]+)['"]\s*\)""")
IMPORT = re.compile(r"(?m)^(?:from|import) +(retrieval_metrics(?:[.][A-Za-z0-9_]+)*)")
# dbt runs models on threads, each of which may ask for a digest; ast.parse on two threads at once can fail in
# CPython 3.11 ("AST constructor recursion depth mismatch", python/cpython#106905): one parse at a time
PARSING = threading.Lock()


def project_dir() -> Path:
    from retrieval_metrics.dbt_runner import project_dir as dbt_project_dir

    return dbt_project_dir()


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
        pending += [name for name in top_level_imports(source_of(module)) if is_module(name)]
    return sorted(seen)


@functools.lru_cache(maxsize=256)
def top_level_imports(source: bytes) -> tuple[str, ...]:
    """What a module's top-level imports name (`module`, and `module.name` for each name taken from one), by its
    source: parsed once per distinct source, as every per-run model of a build asks for the same modules."""
    with PARSING:
        tree = ast.parse(source)
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return tuple(names)


def model_files(model: str, root: Path) -> list[Path]:
    """The model's file and those of the models it reads, directly or not, and of the models the macros read."""
    files = {path.stem: path for path in (root / "models").rglob("*") if path.suffix in (".sql", ".py")}
    if model not in files:
        raise ValueError(f"no model {model!r} in {root / 'models'}")
    macros = "".join(path.read_text() for path in sorted((root / "macros").rglob("*.sql")))
    seen: set[str] = set()
    pending = [model, *REF.findall(macros)]
    while pending:
        name = pending.pop()
        if name in seen or name not in files:
            continue
        seen.add(name)
        pending += REF.findall(files[name].read_text())
    return sorted(files[name] for name in seen)


def code_digest(model: str) -> str:
    """The SQL function: sha256 of the code behind `model`'s rows (the module's docstring says what)."""
    root = project_dir()
    models = model_files(model, root)
    files = [*models, *sorted((root / "macros").rglob("*.sql")), root / "dbt_project.yml"]
    imported = sorted({module for path in models if path.suffix == ".py" for module in IMPORT.findall(path.read_text())})
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    for module in imported_modules(imported):
        digest.update(module.encode() + b"\0" + source_of(module) + b"\0")
    return digest.hexdigest()


def register(con: duckdb.DuckDBPyConnection) -> None:
    """Define code_digest on a connection (a cursor of dbt's too: each is a connection of its own)."""
    try:
        con.create_function(FUNCTION, code_digest, [duckdb.sqltypes.VARCHAR], duckdb.sqltypes.VARCHAR)
    except duckdb.CatalogException:
        pass  # already there: the cursor shares its connection's catalog


class Plugin(BasePlugin):
    """dbt-duckdb's hooks: the function on dbt's connection and on each cursor dbt takes from it."""

    def configure_connection(self, conn: duckdb.DuckDBPyConnection) -> None:
        register(conn)

    def configure_cursor(self, cursor: duckdb.DuckDBPyConnection) -> None:
        register(cursor)
