"""Running dbt on the repo's project against a given warehouse file: in this process through dbt's programmatic
runner (InProcessDbt, the commands' and the notebook's builds), releasing the file after each command, or as a
child process (run_dbt: plain dbt, as a user runs it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from retrieval_metrics.warehouse import REPO_ROOT

def project_dir() -> Path:
    """The dbt project (and its profiles.yml): $DBT_PROJECT_DIR, dbt's own variable, else this repo."""
    return Path(os.environ.get("DBT_PROJECT_DIR") or REPO_ROOT)


def dbt_command(args: Sequence[str]) -> list[str]:
    """dbt from this interpreter's environment (the venv), else from PATH, on the project and its profile."""
    beside = Path(sys.executable).parent / "dbt"
    dbt = str(beside) if beside.exists() else shutil.which("dbt") or "dbt"
    command, *rest = args
    project = str(project_dir())
    return [dbt, "--no-use-colors", command, "--project-dir", project, "--profiles-dir", project, *rest]


def run_dbt(args: Sequence[str], database: Path, *, capture: bool = False) -> subprocess.CompletedProcess[str]:
    """Run `dbt ARGS` on `database` (absolute, whatever directory this runs from) in a child process, as a user
    runs plain dbt; with `capture`, its output is returned instead of shown."""
    env = {**os.environ, "RETRIEVAL_DB": str(database.absolute())}
    return subprocess.run(dbt_command(args), env=env, capture_output=capture, text=True, check=False)


def encountered_error(output: str) -> str | None:
    """dbt's error that stopped it before any node ran (`Encountered an error:`), in one line: its first line
    and its message, e.g. `Compilation Error in model x (...): var k_values: 0 is not a positive integer`."""
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines) if line.rstrip().endswith("Encountered an error:")), None)
    return None if start is None else error_line("\n".join(lines[start + 1 :]))


def error_line(message: str) -> str | None:
    """dbt's error message in one line: its first line and the message under it (not the code it quotes)."""
    rest = [line.strip() for line in message.splitlines() if line.strip() and not line.strip().startswith(">")]
    return ": ".join(rest[:2])[:400] if rest else None


def target_of(dbt_args: Sequence[str]) -> str | None:
    """The profile target named by dbt arguments (--target X, --target=X, -t X), else $DBT_TARGET, else None
    (the profile's default)."""
    target = os.environ.get("DBT_TARGET") or None
    for position, arg in enumerate(dbt_args):
        if arg in ("--target", "-t") and position + 1 < len(dbt_args):
            target = dbt_args[position + 1]
        elif arg.startswith("--target="):
            target = arg.split("=", 1)[1]
    return target


def target_path() -> Path:
    """Where dbt writes run_results.json: $DBT_TARGET_PATH, else the project's target/."""
    return Path(os.environ.get("DBT_TARGET_PATH") or project_dir() / "target")


def log_path() -> Path:
    """dbt's log file: under $DBT_LOG_PATH, else the project's logs/."""
    return Path(os.environ.get("DBT_LOG_PATH") or project_dir() / "logs") / "dbt.log"


KEY_COLUMNS = ("collection_id", "run_id", "question_id", "doc_id", "measure_name", "k")
FAILED = {"error", "fail", "runtime error"}


@dataclass(frozen=True)
class NodeFailure:
    """A node of a build that failed: what it is, why, and the keys of its first offending rows."""

    node: str
    kind: str  # test, model, seed, ...
    status: str
    message: str
    examples: list[str]

    def line(self) -> str:
        where = f"; first: {'; '.join(self.examples)}" if self.examples else ""
        return f"{self.kind} {self.node} {self.status}: {self.message}{where}"


def node_failures(since: datetime, database: Path | None, target: Path | None = None) -> list[NodeFailure]:
    """The failed nodes of the dbt run that wrote run_results.json (in `target`, else target_path()) after
    `since` (none if it did not): each with the first line of its message and, for a data test and given the
    database, the keys of up to three of its failing rows, queried read-only with the test's compiled SQL."""
    return node_results(since, database, target, FAILED)


def node_warnings(since: datetime, database: Path | None, target: Path | None = None) -> list[NodeFailure]:
    """The nodes that warned (a data test of severity warn that found rows) in the dbt run that wrote
    run_results.json after `since`, as node_failures gives the failed ones."""
    return node_results(since, database, target, {"warn"})


def node_results(
    since: datetime, database: Path | None, target: Path | None, statuses: set[str]
) -> list[NodeFailure]:
    """The nodes with one of these statuses in run_results.json, if written after `since` (node_failures)."""
    try:
        results = json.loads(((target or target_path()) / "run_results.json").read_text())
    except (OSError, ValueError):
        return []
    generated = results.get("metadata", {}).get("generated_at", "")
    if not generated:
        return []
    written = datetime.fromisoformat(generated.replace("Z", "+00:00"))
    if (written if written.tzinfo else written.replace(tzinfo=UTC)) < since:  # dbt writes UTC
        return []
    failures = []
    for result in results.get("results", []):
        if result.get("status") not in statuses:
            continue
        kind, _, name = (result["unique_id"].split(".") + ["", ""])[:3]  # test.<project>.<name>[.<hash>]
        message = one_line(result.get("message") or "")
        examples = []
        if kind == "test" and database is not None:
            examples = failing_rows(database, result.get("compiled_code") or "")
        failures.append(NodeFailure(name, kind, result["status"], message, examples))
    return failures


def one_line(message: str, width: int = 300) -> str:
    """A node's message on one line of at most `width` characters; a Python traceback's as what precedes it and
    its last line (the exception), which says what went wrong."""
    head, traceback, tail = message.partition("Traceback (most recent call last):")
    if traceback and tail.strip():
        message = f"{head} {tail.strip().splitlines()[-1]}"
    return " ".join(message.split())[:width]


def failing_rows(database: Path, compiled_sql: str, limit: int = 3) -> list[str]:
    """Up to `limit` failing rows of a data test (the first in the order of their columns), as `key=value` of
    their key columns (else their first three)."""
    import duckdb

    if not compiled_sql.strip():
        return []
    try:
        with duckdb.connect(str(database), read_only=True) as con:
            relation = con.sql(f"select * from ({compiled_sql}) as failing order by all limit {limit}")
            columns = relation.columns
            rows = relation.fetchall()
    except duckdb.Error:
        return []
    shown = [c for c in columns if c in KEY_COLUMNS] or columns[:3]
    return [", ".join(f"{c}={row[columns.index(c)]!r}" for c in shown) for row in rows]


# What a build run by the commands leaves out: dbt's unit tests check the project's SQL, not the data (make test
# runs them); under `import --build`, also the tests of what the import itself guarantees (tag guaranteed_by_import).
COMMAND_BUILD_EXCLUDES = ["--exclude-resource-type", "unit_test"]
IMPORT_GUARANTEES = ["--exclude", "tag:guaranteed_by_import"]


SHOWN = {"dbt_lines": False}  # a command's --verbose: dbt's own lines on stdout too, not only in its log file


@contextmanager
def dbt_lines_shown(shown: bool) -> Iterator[None]:
    """Within this block, in-process builds print dbt's own lines too (else only its log file has them)."""
    before, SHOWN["dbt_lines"] = SHOWN["dbt_lines"], shown
    try:
        yield
    finally:
        SHOWN["dbt_lines"] = before


def quiet_unless_shown() -> list[str]:
    """dbt's options for its lines on stdout: none of them (the log file keeps them, at info), unless shown."""
    return [] if SHOWN["dbt_lines"] else ["--log-level", "none"]


class DbtFailed(Exception):
    """dbt could not load the project: one line."""


class InProcessDbt:
    """dbt in this process, through its programmatic runner: `load` imports dbt and parses the project (it can
    run on one thread while another reads a file into DuckDB, which releases the GIL), `build` then runs on the
    parsed project and releases the warehouse file when done."""

    def __init__(self, database: Path) -> None:
        self.database = database.absolute()
        self.manifest: object | None = None

    def args(self, command: str, *rest: str) -> list[str]:
        project = str(project_dir())
        colors = [] if sys.stdout.isatty() else ["--no-use-colors"]  # no escape codes in a pipe or a file
        # dbt's log file at info (each node, its result and any error), not dbt's default debug (every SQL statement
        # too), which cost the notebook loop's process about 6%; DBT_LOG_LEVEL_FILE=debug brings them back
        file_log = [] if os.environ.get("DBT_LOG_LEVEL_FILE") else ["--log-level-file", "info"]
        return [command, "--project-dir", project, "--profiles-dir", project, *colors, *file_log, *rest]

    def load(self, dbt_args: Sequence[str] = ()) -> None:
        """Parse the project with `dbt_args` (the build's --vars: other vars would make dbt parse again)."""
        from dbt.cli.main import dbtRunner

        os.environ["RETRIEVAL_DB"] = str(self.database)
        result = dbtRunner().invoke(self.args("parse", *quiet_unless_shown(), *dbt_args))
        if not result.success:
            why = error_line(str(result.exception or "")) or "see dbt's log"
            raise DbtFailed(f"dbt could not parse the project: {why}")
        self.manifest = result.result

    def build(self, dbt_args: Sequence[str]) -> BuildOutcome:
        """dbt build with `dbt_args`; dbt's lines go to its log file, and to stdout within dbt_lines_shown(True)."""
        from dbt.cli.main import dbtRunner

        os.environ["RETRIEVAL_DB"] = str(self.database)
        try:
            # the manifest `load` parsed, reused as dbt's programmatic invocations document (dbtRunner(manifest=));
            # dbt writes its artifacts as a `dbt build` does (run_results.json: node_failures reads it)
            args = self.args("build", *quiet_unless_shown(), *dbt_args)
            result = dbtRunner(manifest=self.manifest).invoke(args)
        finally:
            release_database()
        if result.exception is None:
            return BuildOutcome(bool(result.success))
        return BuildOutcome(False, error_line(str(result.exception)) or type(result.exception).__name__)


@dataclass(frozen=True)
class BuildOutcome:
    """How an in-process build ended: every node passed, or not; `stopped`: dbt's error that stopped it before
    its nodes ran (a var refused by a macro, a broken project), in one line."""

    passed: bool
    stopped: str | None = None


def release_database() -> None:
    """Close the DuckDB file that dbt-duckdb keeps open in this process after a dbt command (the profile's
    keep_open: one connection for all of a build's nodes, not one per node), so that the serving copy can be
    published and this process or another can open the file; dbt-duckdb opens it again at its next command.
    Through dbt-duckdb's connection manager (its environment, and the environment's close), not documented API:
    keep_open: false, the documented way, costs a forced build 1.23-1.33x and a notebook's first build
    1.19-1.22x (benchmarks/dbt-internals.md); tests/python/test_dbt_runner.py fails if an upgrade breaks this."""
    from dbt.adapters.duckdb.connections import DuckDBConnectionManager

    opened = DuckDBConnectionManager.env  # looked up outside the try: a dbt-duckdb without it fails loudly
    try:
        environment = opened()
    except Exception:  # dbt-duckdb's own (a bare Exception) when no command opened the file in this process
        return
    environment.close()
