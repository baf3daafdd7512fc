"""`retrieval-metrics import --build`: the import and the build in one process, with the same results, the same
all-or-nothing import and the same messages as `import` then `build`."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from conftest import Warehouse

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


def test_a_failed_build_keeps_the_import_and_the_serving_copy(lesson: Warehouse, tmp_path: Path) -> None:
    qrels, run = files(tmp_path / "files")
    warehouse = lesson.copy(tmp_path / "warehouse")
    result = warehouse.cli("import", "--collection", "tiny", "--qrels", qrels, "--run", run, "--run-id", "r1",
                           "--build", "--vars", "{averaging: sometimes}")  # fmt: skip
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]  # a bad var stops dbt's load, while the import goes on
    assert last.startswith("retrieval-metrics import: error: dbt could not parse the project: Compilation Error")
    assert last.endswith("; the import was committed, nothing was built")
    assert warehouse.rows("select run_id from raw.runs where collection_id = 'tiny'") == [("r1",)]  # as `import`
    assert not (warehouse.db_path.parent / "serving.duckdb").exists()
