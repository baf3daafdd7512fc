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


def first_failure(output: str) -> str:
    """The line of dbt's output that names the first failed node, else its last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    found = next((match.group(0) for line in lines if (match := FAILED_NODE.search(line))), None)
    return found or (lines[-1] if lines else "no output")
