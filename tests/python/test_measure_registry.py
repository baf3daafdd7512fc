"""The measure registry is checked against its schema when dbt parses (macros/measures.sql, checked_registry): an
entry with an unknown key, a missing key or a value of the wrong kind fails the parse in one error that names the
entry and the key. Each case edits one entry of a copy of the project, then runs `dbt parse` on it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import copy_project

ENTRY = '''        {"name": "num_ret", "column": "num_ret", "at_k": false, "reference": "trec_eval", "aggregation": "sum",
         "compared": false, "uses_relevance_level": false, "sql": "cast(num_ret as double)",'''


@pytest.mark.dbt
@pytest.mark.parametrize(
    ("edited", "message"),
    [
        (ENTRY.replace('"uses_relevance_level"', '"uses_relevance_levl"'),
         "entry 1 (num_ret): unknown key 'uses_relevance_levl' (its keys: name, column, at_k, "),
        (ENTRY.replace('"aggregation": "sum"', '"aggregation": "total"'),
         "entry 1 (num_ret): key 'aggregation': \"total\" is not one of mean, sum, geometric_mean"),
        (ENTRY.replace('"at_k": false', '"at_k": "no"'), "entry 1 (num_ret): key 'at_k': \"no\" is not true or false"),
        (ENTRY.replace('"compared": false, ', ''), "entry 1 (num_ret): no key 'compared'"),
        (ENTRY.replace('"column": "num_ret"', '"column": "Num Ret"'),
         "entry 1 (num_ret): key 'column': \"Num Ret\" is not a lowercase SQL identifier"),
    ],
    ids=["unknown key", "value not allowed", "not a boolean", "missing key", "not an identifier"],
)  # fmt: skip
def test_a_bad_registry_entry_fails_the_parse_naming_it(tmp_path: Path, edited: str, message: str) -> None:
    project = copy_project(tmp_path).project_dir
    registry = project / "macros" / "measures.sql"
    source = registry.read_text()
    assert source.count(ENTRY) == 1
    registry.write_text(source.replace(ENTRY, edited))
    dbt = Path(sys.executable).parent / "dbt"
    env = {**os.environ, "RETRIEVAL_DB": str(tmp_path / "x.duckdb"), "DBT_TARGET_PATH": str(tmp_path / "target"),
           "DBT_LOG_PATH": str(tmp_path / "logs")}  # fmt: skip
    parsed = subprocess.run([str(dbt), "--no-use-colors", "parse", "--project-dir", str(project), "--profiles-dir",
                             str(project)], env=env, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert parsed.returncode != 0, parsed.stdout[-2000:]
    assert f"measure registry (macros/measures.sql): {message}" in parsed.stdout, parsed.stdout[-3000:]
