"""`retrieval-metrics import --build`: the import and the build in one process, with the same results, the same
all-or-nothing import and the same messages as `import` then `build`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from conftest import REPO_ROOT, Warehouse, copy_project, warehouse_checksums

pytestmark = pytest.mark.dbt

QRELS = "1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n2 0 d1 1\n"
RUN = "1 Q0 d2 1 2.0 t\n1 Q0 d1 2 1.0 t\n2 Q0 d1 1 0.5 t\n2 Q0 d3 2 0.5 t\n"
MEASURES = "select run_id, question_id, measure_name, value from question_measures where collection_id = 'tiny'"


def files(folder: Path) -> tuple[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "qrels.txt").write_text(QRELS)
    (folder / "run.txt").write_text(RUN)
    return str(folder / "qrels.txt"), str(folder / "run.txt")


def test_one_process_equals_import_then_build(lesson: Warehouse, tmp_path: Path) -> None:
    qrels, run = files(tmp_path / "files")
    together = lesson.copy(tmp_path / "together")
    result = together.cli("import", "--collection", "tiny", "--qrels", qrels, "--run", run, "--run-id", "r1", "--build")
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("retrieval-metrics import: collection tiny: 4 judgments for 2 questions; run r1: 4 ranked")
    assert ", dbt loaded alongside in " in last and ", then built in " in last and "serving.duckdb (" in last
    with duckdb.connect(str(together.db_path.parent / "serving.duckdb"), read_only=True) as serving:
        published = serving.execute(MEASURES + " order by all").fetchall()

    apart = lesson.copy(tmp_path / "apart")
    assert apart.cli("import", "--collection", "tiny", "--qrels", qrels, "--run", run, "--run-id", "r1").returncode == 0
    assert apart.cli("build").returncode == 0
    assert published == apart.rows(MEASURES + " order by all") == together.rows(MEASURES + " order by all")
    assert len(published) > 0


def test_an_import_into_an_empty_warehouse_records_its_whole_build(tmp_path: Path) -> None:
    """The next import --build with the same vars builds what reads the new run only, and a build then nothing."""
    qrels, run = files(tmp_path / "files")
    warehouse = Warehouse(REPO_ROOT, tmp_path / "empty" / "warehouse.duckdb")
    settings = ("--vars", "{k_values: [1, 3]}")
    first = warehouse.cli("import", "--collection", "tiny", "--qrels", qrels, "--run", run, "--run-id", "r1",
                          "--build", *settings)  # fmt: skip
    assert first.returncode == 0, first.stderr
    second = warehouse.cli("import", "--collection", "tiny", "--run", run, "--run-id", "r2", "--build", *settings)
    assert second.returncode == 0, second.stderr
    results = Path(warehouse.env["DBT_TARGET_PATH"]) / "run_results.json"
    ran = {result["unique_id"] for result in json.loads(results.read_text())["results"]}
    assert "model.retrieval_metrics.question_measures" in ran
    assert not any(node.startswith(("seed.", "model.retrieval_metrics.stg_")) for node in ran), sorted(ran)
    assert "nothing to build" in warehouse.cli("build", *settings).stdout


def test_bad_input_builds_nothing(lesson: Warehouse, tmp_path: Path) -> None:
    qrels, _ = files(tmp_path / "files")
    bad = tmp_path / "files" / "bad.txt"
    bad.write_text("1 Q0 d1 1 1.0 t\n1 Q0 d2 2 high t\n")
    warehouse = lesson.copy(tmp_path / "warehouse")
    before = warehouse.rows("select * from raw.runs order by all")
    result = warehouse.cli("import", "--collection", "tiny", "--qrels", qrels, "--run", str(bad), "--run-id", "r1",
                           "--build")  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == f"retrieval-metrics import: error: {bad}:2: score 'high' is not a number"
    assert warehouse.rows("select * from raw.runs order by all") == before
    assert not (warehouse.db_path.parent / "serving.duckdb").exists()


def test_a_refused_setting_stops_the_import_before_it_starts(lesson: Warehouse, tmp_path: Path) -> None:
    qrels, run = files(tmp_path / "files")
    warehouse = lesson.copy(tmp_path / "warehouse")
    before = warehouse_checksums(warehouse.db_path)
    result = warehouse.cli("import", "--collection", "tiny", "--qrels", qrels, "--run", run, "--run-id", "r1",
                           "--build", "--vars", "{averaging: sometimes}")  # fmt: skip
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == ("retrieval-metrics import: error: var averaging: 'sometimes' is not one of "
                             "all_questions, retrieved_only (dbt_project.yml documents each var)\n")  # fmt: skip
    assert warehouse_checksums(warehouse.db_path) == before


def test_a_build_that_fails_after_the_import_names_the_node_and_keeps_the_import(
    lesson: Warehouse, tmp_path: Path
) -> None:
    """A data test that fails (here one added to a copy of the project) is named with its first rows, as under
    `build`; the import stays committed and the serving copy as it was."""
    qrels, run = files(tmp_path / "files")
    project = copy_project(tmp_path / "copy")
    (project.project_dir / "tests" / "marts" / "no_run_r1.sql").write_text(
        "select collection_id, run_id, question_id from {{ ref('question_metrics') }} where run_id = 'r1' and k = 1 and question_id = '1'\n"
    )
    shutil.copy(lesson.db_path, project.db_path)
    result = project.cli("import", "--collection", "tiny", "--qrels", qrels, "--run", run, "--run-id", "r1", "--build")
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("retrieval-metrics import: ")]
    assert lines[0] == ("retrieval-metrics import: test no_run_r1 fail: Got 1 result, configured to fail if != 0; "
                        "first: collection_id='tiny', run_id='r1', question_id='1'")  # fmt: skip
    assert lines[1].startswith("retrieval-metrics import: error: collection tiny: 4 judgments for 2 questions; run r1: "
                               "4 ranked docs, committed; then dbt build failed (1 node failed, the first test "
                               "no_run_r1); fix the rows or the settings named above and build again; ")  # fmt: skip
    assert lines[1].endswith(f"serving.duckdb left as it was; dbt's log: {project.cli_target_dir / 'logs' / 'dbt.log'}")
    assert len(lines) == 2
    assert project.rows("select run_id from raw.runs where collection_id = 'tiny'") == [("r1",)]  # as `import`
    assert not (project.db_path.parent / "serving.duckdb").exists()
