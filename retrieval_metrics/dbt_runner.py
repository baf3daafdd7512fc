"""Running dbt on the repo's project against a given warehouse file, as a child process: dbt's output and exit
code are its own, and the caller's process never holds dbt's connection to the file."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from retrieval_metrics.warehouse import REPO_ROOT

FAILED_NODE = re.compile(r"\b(?:Failure|Error) in (?:test|model|seed|snapshot|unit_test) .*")


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
    """Run `dbt ARGS` on `database` (absolute, whatever directory this runs from); with `capture`, its output
    is returned instead of shown."""
    env = {**os.environ, "RETRIEVAL_DB": str(database.absolute())}
    return subprocess.run(dbt_command(args), env=env, capture_output=capture, text=True, check=False)


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


def first_failure(output: str) -> str:
    """The line of dbt's output that names the first failed node, else its last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    found = next((match.group(0) for line in lines if (match := FAILED_NODE.search(line))), None)
    return found or (lines[-1] if lines else "no output")


# What a build run by the commands leaves out: dbt's unit tests check the project's SQL, not the data (make test
# runs them); under `import --build`, also the tests of what the import itself guarantees (tag guaranteed_by_import).
COMMAND_BUILD_EXCLUDES = ["--exclude-resource-type", "unit_test"]
IMPORT_GUARANTEES = ["--exclude", "tag:guaranteed_by_import"]


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
        return [command, "--project-dir", project, "--profiles-dir", project, *rest]

    def load(self, dbt_args: Sequence[str] = ()) -> None:
        """Parse the project with `dbt_args` (the build's --vars: other vars would make dbt parse again)."""
        from dbt.cli.main import dbtRunner

        os.environ["RETRIEVAL_DB"] = str(self.database)
        result = dbtRunner().invoke(self.args("parse", "--quiet", *dbt_args))
        if not result.success:
            first_line = (str(result.exception or "see dbt's log").splitlines() or ["?"])[0]
            raise DbtFailed(f"dbt could not parse the project: {first_line}")
        self.manifest = result.result

    def build(self, dbt_args: Sequence[str]) -> bool:
        """dbt build with `dbt_args`; True if every node passed. dbt prints its own lines, as `dbt build` does."""
        from dbt.adapters.duckdb.connections import DuckDBConnectionManager
        from dbt.cli.main import dbtRunner

        os.environ["RETRIEVAL_DB"] = str(self.database)
        try:
            return bool(dbtRunner(manifest=self.manifest).invoke(self.args("build", *dbt_args)).success)
        finally:
            # dbt-duckdb keeps the file open in this process (keep_open): close it, so that the serving copy can
            # be published and a reader can open the file
            with DuckDBConnectionManager._LOCK:
                if DuckDBConnectionManager._ENV is not None:
                    DuckDBConnectionManager._ENV.close()
                    DuckDBConnectionManager._ENV = None
