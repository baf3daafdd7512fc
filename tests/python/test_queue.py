"""Readers never wait, writers queue: while a writer holds the build database, the readers (query, scorecard)
answer at once from the serving copy, saying which build they read; a second writer waits its turn (saying for
whom), gives up after --wait seconds with one line and exit 2, having written nothing; a writer killed with
kill -9 blocks nobody; two imports started together both land."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import REPO_ROOT, Warehouse
from retrieval_metrics.serving import publish

pytestmark = pytest.mark.dbt

# A writer that takes the queue and DuckDB's write lock, as an import or a build does, and holds both until its
# standard input closes (or it is killed).
HOLDER = """
import sys
from pathlib import Path
from retrieval_metrics.warehouse import connect
from retrieval_metrics.writer_queue import queued_writer
with queued_writer(Path(sys.argv[1]), "import run held_run"), connect(sys.argv[1]):
    print("holding", flush=True)
    sys.stdin.read()
"""

QUESTIONS = ["rate_limit_status", "pro_rate_limit", "pro_plan_cost", "free_plan_cost"]


@pytest.fixture
def published(lesson: Warehouse, tmp_path: Path) -> Warehouse:
    """A copy of the lesson's warehouse with its serving copy published beside it."""
    warehouse = lesson.copy(tmp_path / "warehouse")
    publish(warehouse.db_path, warehouse.db_path.with_name("serving.duckdb"))
    return warehouse


@pytest.fixture
def holder(published: Warehouse) -> Iterator[subprocess.Popen[str]]:
    """A process holding the build database as a writer does, until the test releases or kills it."""
    process = subprocess.Popen([sys.executable, "-c", HOLDER, str(published.db_path)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT)  # fmt: skip
    assert process.stdout is not None and process.stdout.readline() == "holding\n"
    yield process
    process.kill()
    process.wait()


def run_file(path: Path, top: str) -> Path:
    """A TREC run over four Docent questions that puts `top` first, then the other docs."""
    others = [doc for doc in ("plans", "ratelimits", "errors", "auth") if doc != top]
    path.write_text("".join(f"{q} Q0 {doc} {rank} {10 - rank} t\n"
                            for q in QUESTIONS for rank, doc in enumerate([top, *others], 1)))  # fmt: skip
    return path


def served_runs(warehouse: Warehouse) -> list[str]:
    with Warehouse(warehouse.project_dir, warehouse.db_path.with_name("serving.duckdb")).connect() as con:
        return [run_id for (run_id,) in con.execute("select distinct run_id from run_metrics order by 1").fetchall()]


def raw_runs(warehouse: Warehouse) -> list[tuple[object, ...]]:
    return warehouse.rows("select run_id, run_version from raw.runs order by run_id")


def test_readers_answer_from_the_serving_copy_while_a_writer_holds_the_build(
    published: Warehouse, holder: subprocess.Popen[str]
) -> None:
    started = time.monotonic()
    scorecard = published.cli("scorecard")
    query = published.cli("query", "select run_id, k, ndcg from run_metrics order by k")
    assert time.monotonic() - started < 60  # no waiting: a build holding the file does not block them
    assert scorecard.returncode == 0 and query.returncode == 0, scorecard.stderr + query.stderr
    assert "Recall@2=0.889 [0.667, 1.000]   Precision@2=0.444" in scorecard.stdout
    assert "0.8068732785714351" in query.stdout
    for result, command in ((scorecard, "scorecard"), (query, "query")):
        (line,) = result.stderr.splitlines()
        assert line.startswith(f"retrieval-metrics {command}: read ") and "serving.duckdb" in line, line
        assert "the build published at 20" in line and "has been written since" not in line, line
    # --db still reads the file it names: here the build database, which the writer holds
    direct = published.cli("query", "select 1", "--db", str(published.db_path))
    assert direct.returncode == 2 and "is locked by PID" in direct.stderr


def test_a_writer_waits_its_turn_then_lands(published: Warehouse, holder: subprocess.Popen[str], tmp_path: Path) -> None:
    run = run_file(tmp_path / "plans_first.txt", "plans")
    waiting = subprocess.Popen(
        [sys.executable, "-m", "retrieval_metrics", "import", "--collection", "docent", "--run", str(run),
         "--run-id", "plans_first", "--build", "--wait", "120"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=published.env, cwd=REPO_ROOT,
    )  # fmt: skip
    assert waiting.stderr is not None
    line = waiting.stderr.readline()
    assert line.startswith(f"retrieval-metrics import: waiting for PID {holder.pid} (import run held_run), started "), line
    assert "(up to 120 s, --wait)" in line
    assert waiting.poll() is None  # still waiting
    holder.communicate("")  # the holder finishes
    out, err = waiting.communicate(timeout=600)
    assert waiting.returncode == 0, line + err
    assert "published" in out
    assert served_runs(published) == ["keyword_overlap", "plans_first"]


def test_a_writer_gives_up_after_wait_seconds_having_written_nothing(
    published: Warehouse, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    before = raw_runs(published)
    holder: subprocess.Popen[str] = request.getfixturevalue("holder")
    run = run_file(tmp_path / "plans_first.txt", "plans")
    started = time.monotonic()
    result = published.cli("import", "--collection", "docent", "--run", str(run), "--run-id", "late", "--wait", "1")
    assert 1 <= time.monotonic() - started < 60
    assert result.returncode == 2
    waiting, error = result.stderr.splitlines()
    assert waiting.startswith(f"retrieval-metrics import: waiting for PID {holder.pid} (import run held_run)")
    assert error.startswith("retrieval-metrics import: error: ")
    assert f"is being written by PID {holder.pid} (import run held_run), started " in error
    assert "gave up after waiting 1 s (--wait): nothing was written" in error
    # --wait 0 fails at once, with the same line and no waiting line; a build likewise
    for args in (["import", "--collection", "docent", "--run", str(run), "--run-id", "late", "--wait", "0"],
                 ["build", "--wait", "0"]):  # fmt: skip
        at_once = published.cli(*args)
        assert at_once.returncode == 2 and at_once.stderr.count("\n") == 1, at_once.stderr
        assert "gave up after waiting 0 s (--wait)" in at_once.stderr
    holder.communicate("")
    assert raw_runs(published) == before


def test_a_writer_killed_with_kill_9_blocks_nobody(
    published: Warehouse, holder: subprocess.Popen[str], tmp_path: Path
) -> None:
    holder.kill()  # SIGKILL: no clean-up runs; the lock file stays, naming the dead holder
    holder.wait()
    assert published.db_path.with_name("warehouse.duckdb.lock").exists()
    run = run_file(tmp_path / "errors_first.txt", "errors")
    result = published.cli("import", "--collection", "docent", "--run", str(run), "--run-id", "after", "--wait", "5")
    assert result.returncode == 0, result.stderr
    assert "waiting" not in result.stderr
    assert ("after",) in [(run_id,) for run_id, _ in raw_runs(published)]


def test_two_imports_started_together_both_land(published: Warehouse, tmp_path: Path) -> None:
    commands = [
        [sys.executable, "-m", "retrieval_metrics", "import", "--collection", "docent",
         "--run", str(run_file(tmp_path / f"{name}.txt", top)), "--run-id", name, "--build"]
        for name, top in (("plans_first", "plans"), ("errors_first", "errors"))
    ]  # fmt: skip
    processes = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=published.env, cwd=REPO_ROOT) for command in commands]  # fmt: skip
    outputs = [process.communicate(timeout=600) for process in processes]
    assert [process.returncode for process in processes] == [0, 0], outputs
    assert sum("waiting for PID" in err for _, err in outputs) == 1, outputs  # the second waited for the first
    assert served_runs(published) == ["errors_first", "keyword_overlap", "plans_first"]
