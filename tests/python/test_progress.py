"""Progress bars: `retrieval-metrics rank`, `retrieval-metrics import` and scripts/benchmark.py show a tqdm bar
with counts and a rate on a terminal, and only their summary lines in a pipe or under CI.

rank runs dbt (the seeds it reads) first, so the tests that rank are `dbt`; the terminal (pty) ones are `slow`.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from benchmark import generate
from conftest import Warehouse, cli_env

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
CLI = ["-m", "retrieval_metrics"]  # after sys.executable
BAR = re.compile(r"\d+%\|")  # tqdm's "42%|" before the bar
RATE = re.compile(r"\d(?:\.\d+)?[kMG]?\s?(?:[a-z]+/s)\b|s/[a-z]+\b")  # "17.3question/s", "3.2M rows/s", "1.5s/stage"


def environment(tmp_path: Path, start: Warehouse | None = None, **extra: str) -> dict[str, str]:
    """A warehouse of its own (a copy of `start`, or a new one), dbt's files out of the repo, no CI or
    TQDM_DISABLE unless given."""
    env = cli_env(start.copy(tmp_path / "start").db_path if start else tmp_path / "progress.duckdb")
    return {**{k: v for k, v in env.items() if k not in {"CI", "TQDM_DISABLE"}}, **extra}


def in_a_pipe(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def on_a_terminal(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """Run with stderr on a pseudo-terminal (120 x 40) and stdout in a pipe: (exit code, stdout, terminal text)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    process = subprocess.Popen(
        [sys.executable, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, env=env
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1.0)
        if not ready:
            if process.poll() is not None:
                break
            continue
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: every writer of the terminal has closed it
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    stdout, _ = process.communicate(timeout=60)
    return process.returncode, stdout.decode(), b"".join(chunks).decode(errors="replace")


@pytest.fixture(scope="module")
def trec_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return generate(tmp_path_factory.mktemp("trec"), n_questions=200, docs_per_question=50, seed=5)


def rank_args() -> list[str]:
    return [*CLI, "rank", "--retriever", "keyword_overlap"]


def import_args(trec_files: tuple[Path, Path]) -> list[str]:
    qrels, run = trec_files
    return [*CLI, "import", "--collection", "gen", "--qrels", str(qrels), "--run", str(run), "--run-id", "gen_run"]


def benchmark_args(tmp_path: Path) -> list[str]:
    return [str(SCRIPTS / "benchmark.py"), "--questions", "20", "--docs-per-question", "30", "--seed", "3",
            "--workdir", str(tmp_path / "bench"), "--peers", "pytrec_eval,duckdb_sql"]  # fmt: skip


RANK_LINE = "retrieval-metrics rank: wrote run docent/keyword_overlap: 72 ranked docs for 9 questions"
IMPORT_LINE = (
    "retrieval-metrics import: collection gen: {judgments} judgments for 200 questions; run gen_run: 10000 ranked docs"
)


def judgments(trec_files: tuple[Path, Path]) -> int:
    return len(trec_files[0].read_text().splitlines())


@pytest.mark.dbt
@pytest.mark.parametrize("ci", [None, "true"], ids=["pipe", "pipe-and-CI"])
def test_in_a_pipe_the_scripts_print_their_summary_line_and_no_bar(
    lesson: Warehouse, tmp_path: Path, trec_files: tuple[Path, Path], ci: str | None
) -> None:
    env = environment(tmp_path, lesson, **({"CI": ci} if ci else {}))
    ranked = in_a_pipe(rank_args(), env)
    assert (ranked.returncode, ranked.stdout, ranked.stderr) == (0, RANK_LINE + "\n", "")

    imported = in_a_pipe(import_args(trec_files), env)
    expected = IMPORT_LINE.format(judgments=judgments(trec_files)) + "\n"
    assert (imported.returncode, imported.stdout, imported.stderr) == (0, expected, "")

    bench = in_a_pipe(benchmark_args(tmp_path), env)
    assert bench.returncode == 0 and bench.stderr == "", bench.stderr
    # in a log, one line per peer (and round) instead of a bar
    assert "benchmark: round 1 of 1: running pytrec_eval ..." in bench.stdout
    assert not BAR.search(bench.stdout)


@pytest.mark.slow
@pytest.mark.dbt
def test_on_a_terminal_rank_shows_a_bar_with_counts_and_a_rate(lesson: Warehouse, tmp_path: Path) -> None:
    code, stdout, terminal = on_a_terminal(rank_args(), environment(tmp_path, lesson))
    assert code == 0 and stdout == RANK_LINE + "\n"
    # the bar's description is "rank": "rank: 100%|██████████| 9/9 [00:00<00:00, 17.3question/s, bm25]"
    assert re.search(r"\brank: +\d+%\|", terminal) and BAR.search(terminal) and "9/9" in terminal, terminal
    assert RATE.search(terminal) and "question/s" in terminal, terminal


@pytest.mark.slow
def test_on_a_terminal_import_shows_its_stages_rows_and_rows_per_second(
    tmp_path: Path, trec_files: tuple[Path, Path]
) -> None:
    code, stdout, terminal = on_a_terminal(import_args(trec_files), environment(tmp_path))
    assert code == 0 and stdout == IMPORT_LINE.format(judgments=judgments(trec_files)) + "\n"
    assert "retrieval-metrics import:" in terminal and BAR.search(terminal) and "4/4" in terminal, terminal
    for stage in ("parse", "check", "rank", "write"):
        assert stage in terminal, terminal
    # "rank | check: 858 rows at 88.1k rows/s", "write | rank: 10,000 rows at 577k rows/s",
    # then "4/4 [...] 10,858 rows at 281k rows/s"
    assert re.search(r"rank \| check: \d{3} rows at [\d.]+[kMG]? rows/s", terminal), terminal
    assert re.search(r"write \| rank: 10,000 rows at [\d.]+[kMG]? rows/s", terminal), terminal
    assert re.search(r"4/4 \[.*, 10,\d{3} rows at [\d.]+[kMG]? rows/s\]", terminal), terminal


@pytest.mark.slow
def test_on_a_terminal_benchmark_shows_a_bar_over_the_peers(tmp_path: Path) -> None:
    code, stdout, terminal = on_a_terminal(benchmark_args(tmp_path), environment(tmp_path))
    assert code == 0 and "check: pytrec_eval and duckdb_sql agree" in stdout
    # the bar replaces the pipe's "benchmark: round 1 of 1: running pytrec_eval ..." lines
    assert "benchmark: round" not in stdout and "running pytrec_eval" not in stdout, stdout
    assert "benchmark:" in terminal and "2/2" in terminal and RATE.search(terminal), terminal


@pytest.mark.slow
@pytest.mark.dbt
def test_ci_turns_the_bar_off_even_on_a_terminal(lesson: Warehouse, tmp_path: Path) -> None:
    code, stdout, terminal = on_a_terminal(rank_args(), environment(tmp_path, lesson, CI="true"))
    assert code == 0 and stdout == RANK_LINE + "\n"
    assert not BAR.search(terminal) and terminal.strip() == "", terminal
