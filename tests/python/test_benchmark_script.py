"""scripts/benchmark.py at a tiny scale: the generated TREC files' shape, and the CLI with two peers that agree.

ranx is a bench-only dependency (requirements-bench.txt), so only pytrec_eval and duckdb_sql run here.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

from benchmark import Result, generate, median_run

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "benchmark.py"


def test_generate_writes_trec_files_with_ties_and_unretrieved_relevant_docs(tmp_path: Path) -> None:
    qrels_path, run_path = generate(tmp_path, n_questions=20, docs_per_question=30, seed=3)
    run = [line.split(" ") for line in run_path.read_text().splitlines()]
    qrels = [line.split(" ") for line in qrels_path.read_text().splitlines()]

    assert len(run) == 20 * 30 and {len(fields) for fields in run} == {6}
    assert {len(fields) for fields in qrels} == {4}
    assert 20 * 3 <= len(qrels) <= 20 * 6  # about 5 judgments a question
    assert all(re.fullmatch(r"q\d{5} Q0 d\d{7} \d+ \d\.\d\d bench", " ".join(f)) for f in run)
    assert all(re.fullmatch(r"q\d{5} 0 d\d{7} [0-3]", " ".join(f)) for f in qrels)

    by_question: dict[str, list[tuple[int, float, str]]] = defaultdict(list)
    for qid, _, docno, rank, score, _ in run:
        by_question[qid].append((int(rank), float(score), docno))
    assert len(by_question) == 20
    for rows in by_question.values():
        assert [rank for rank, _, _ in rows] == list(range(1, 31))
        assert len({docno for _, _, docno in rows}) == 30
        # trec_eval's order: score descending, ties by docno descending
        assert rows == sorted(rows, key=lambda r: (-r[1], tuple(-ord(c) for c in r[2])))
    ties = Counter((qid, score) for qid, _, _, _, score, _ in run)
    assert any(count > 1 for count in ties.values())

    retrieved = {(qid, docno) for qid, _, docno, _, _, _ in run}
    assert {qid for qid, _, _, _ in qrels} == set(by_question)
    assert {rel for _, _, _, rel in qrels} == {"0", "1", "2", "3"}
    assert any((qid, docno) not in retrieved and rel != "0" for qid, _, docno, rel in qrels)
    assert len({(qid, docno) for qid, _, docno, _ in qrels}) == len(qrels)

    again = tmp_path / "again"
    generate(again, n_questions=20, docs_per_question=30, seed=3)
    assert (again / "run.txt").read_bytes() == run_path.read_bytes()


def test_cli_runs_pytrec_eval_and_duckdb_sql_and_they_agree(tmp_path: Path) -> None:
    markdown = tmp_path / "bench.md"
    command = [
        sys.executable, str(SCRIPT), "--questions", "20", "--docs-per-question", "30", "--seed", "3",
        "--workdir", str(tmp_path / "work"), "--peers", "pytrec_eval,duckdb_sql", "--markdown", str(markdown),
        "--rounds", "2",
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr

    lines = result.stdout.splitlines()
    assert any(line.split()[:3] == ["peer", "wall", "s"] for line in lines)
    for peer in ("pytrec_eval", "duckdb_sql"):
        row = next(line.split() for line in lines if line.startswith(peer + " "))
        seconds, rss_mib = float(row[1]), float(row[2])
        assert seconds > 0 and rss_mib > 0
    assert any(line.startswith("check: pytrec_eval and duckdb_sql agree to 1e-09") for line in lines)
    assert sum("median of 2 rounds" in line for line in lines) == 2

    report = markdown.read_text()
    assert "| pytrec_eval |" in report and "| duckdb_sql |" in report and "nproc" in report

    # the rerun reuses the generated data: no second generate child (each run starts with an empty logs
    # directory), and the files and their complete.json stamp are the very same files, untouched
    data = tmp_path / "work" / "data" / "q20_d30_s3"
    logs = tmp_path / "work" / "logs"
    assert [p.name for p in logs.glob("generate_*.out")] == ["generate_q20_d30_s3.out"]
    files = ("qrels.txt", "run.txt", "complete.json")
    generated = {name: (data / name).stat() for name in files}
    rerun = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert rerun.returncode == 0 and "agree to 1e-09" in rerun.stdout, rerun.stdout + rerun.stderr
    assert f"benchmark: data in {data}" in rerun.stdout
    assert not list(logs.glob("generate_*")), sorted(p.name for p in logs.iterdir())
    for name in files:
        after = (data / name).stat()
        assert (after.st_ino, after.st_mtime_ns, after.st_size) == (
            generated[name].st_ino, generated[name].st_mtime_ns, generated[name].st_size
        ), name


def test_a_peers_rounds_report_the_median_time_and_the_highest_memory() -> None:
    rounds = [Result("p", 5.0, 100, {"m": 5.0}), Result("p", 1.0, 300, {"m": 1.0}), Result("p", 3.0, 200, {"m": 3.0})]
    median = median_run(rounds)
    assert (median.seconds, median.max_rss_kib, median.metrics) == (3.0, 300, {"m": 3.0})
    assert median.note == "median of 3 rounds: 5.00, 1.00, 3.00 s"
    assert median_run(rounds[:2]).seconds == 1.0  # an even number: the lower middle one
    skipped = Result("p", note="skipped: not installed")
    assert median_run([skipped]) is skipped
