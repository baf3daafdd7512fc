"""A per-run Python model's runs are recomputed when the package code it runs changes (code_digest, in
retrieval_metrics/dbt_plugin.py), and only then.

The commands run in a child (outside the repo) whose PYTHONPATH puts a copy of the package first, as a user who pulls a new version
of the project (or installs another one) runs it: the bootstrap's interval rule in the copy's stats.py changed,
a build recomputes every run's intervals; a module no model imports (the report's) changed, it recomputes none;
the rule put back, the intervals are those of before, bit for bit.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT, Warehouse, cli_env
from retrieval_metrics.dbt_plugin import imported_modules

INTERVALS = ("select collection_id, run_id, measure_name, ci_low, ci_high from run_measures "
             "where ci_low is not null order by all")  # fmt: skip
PYTHON_MODELS = {"run_measure_intervals": "main", "run_comparison_tests": "main"}
# (model, collection, run) -> the dbt invocation its rows carry, over the per-run models
COMPUTED = " union all ".join(
    f"select distinct '{model}', collection_id, run_id, invocation_id from {schema}.{model}"
    for model, schema in sorted({**PYTHON_MODELS, "int_run_questions_measured": "intermediate"}.items())
)


def test_the_digest_follows_the_package_modules_a_module_imports() -> None:
    assert imported_modules(["retrieval_metrics.stats"]) == ["retrieval_metrics.stats"]
    # dbt_python imports warehouse at its top; the lazy import inside __init__'s function is not followed
    assert imported_modules(["retrieval_metrics.dbt_python"]) == ["retrieval_metrics.dbt_python",
                                                                   "retrieval_metrics.warehouse"]  # fmt: skip


@pytest.mark.dbt
@pytest.mark.slow
def test_a_change_to_the_code_a_model_runs_recomputes_its_runs(lesson: Warehouse, tmp_path: Path) -> None:
    warehouse = lesson.copy(tmp_path / "warehouse")
    package = tmp_path / "pythonpath" / "retrieval_metrics"
    shutil.copytree(REPO_ROOT / "retrieval_metrics", package, ignore=shutil.ignore_patterns("__pycache__"))
    env = {**cli_env(warehouse.db_path), "PYTHONPATH": str(package.parent)}

    def build() -> dict[tuple[object, ...], object]:
        """Build in the child; each (model, collection, run) computed -> the dbt invocation that computed it."""
        built = subprocess.run([sys.executable, "-m", "retrieval_metrics", "build"], env=env, cwd=tmp_path,
                               capture_output=True, text=True, timeout=900, check=False)  # fmt: skip
        assert built.returncode == 0, built.stdout + built.stderr
        return {row[:3]: row[3] for row in warehouse.rows(COMPUTED)}

    report = package / "report.py"
    report.write_text(report.read_text() + "\n# an edit to code no model runs\n")
    computed, intervals = build(), warehouse.rows(INTERVALS)  # dbt ran (the package changed), recomputed no run
    assert computed == {row[:3]: row[3] for row in lesson.rows(COMPUTED)}
    assert intervals == lesson.rows(INTERVALS) and intervals

    stats = package / "stats.py"
    source = stats.read_text()
    assert source.count("[0.025, 0.975]") == 1
    stats.write_text(source.replace("[0.025, 0.975]", "[0.25, 0.75]"))  # the 50% interval
    after = build()
    recomputed = {key for key, invocation in after.items() if computed.get(key) != invocation}
    python_runs = {key for key in computed if key[0] in PYTHON_MODELS}
    assert python_runs and python_runs <= recomputed  # every run of every model that runs stats.py
    assert ("int_run_questions_measured", "docent", "keyword_overlap") not in recomputed  # SQL, upstream of them
    narrower = warehouse.rows(INTERVALS)
    assert [row[:3] for row in narrower] == [row[:3] for row in intervals]
    assert all(new[3] >= old[3] and new[4] <= old[4] for old, new in zip(intervals, narrower, strict=True))
    assert any(new[3:] != old[3:] for old, new in zip(intervals, narrower, strict=True))

    stats.write_text(source)
    build()
    assert warehouse.rows(INTERVALS) == intervals  # the rule back: the same bits as before
