"""scripts/benchmark.py at a tiny scale: the generated TREC files' shape, the CLI with two peers that agree, the
reading of `import --build`'s last line, ours_11th's cached warehouse, and (bench marker: `make test-extras`) every
peer end to end, as `make bench` runs them.

ranx is a bench-only dependency (requirements-bench.txt): the end-to-end run, which takes a minute of seven dbt
commands, is in the bench tier with it, out of `make test`.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import benchmark
import duckdb
import pytest
from benchmark import (
    OursSetup,
    PeerFailed,
    Result,
    generate,
    import_split,
    median_run,
    options,
    prepare_prior_warehouse,
    split_note,
    split_table,
)

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


def test_import_passes_times_each_pass_of_a_run(tmp_path: Path) -> None:
    """scripts/import_passes.py (docs/speed.md) on a tiny generated run: one line per pass, each a time."""
    _, run_path = generate(tmp_path, n_questions=20, docs_per_question=30, seed=3)
    script = SCRIPT.with_name("import_passes.py")
    result = subprocess.run([sys.executable, str(script), str(run_path), "--db", str(tmp_path / "passes.duckdb")],
                            capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split("  ")[0] for line in lines] == [
        "read the file", "read every field", "read and check (one_pass_run)", "read, check and rank (ranked_rows)",
        "... written to a table, committed", "the duplicate check"]  # fmt: skip
    assert all(re.search(r" \d+\.\d\d s$", line) for line in lines)
    with duckdb.connect(str(tmp_path / "passes.duckdb"), read_only=True) as con:  # the ranked rows it wrote
        assert con.execute("select count(*), min(rank), max(rank) from ranked_run").fetchone() == (600, 1, 30)


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


def test_a_fixed_cost_measured_in_one_round_is_carried_to_the_median_round() -> None:
    split = {"import": 1.0, "load": 0.5, "build": 2.0, "other": 0.3}
    rounds = [Result("ours", 9.0, 100, split={**split, "noop_build": 4.0}), Result("ours", 5.0, 100, split=split),
              Result("ours", 7.0, 100, split=split)]  # fmt: skip
    assert median_run(rounds).split == {**split, "noop_build": 4.0}


IMPORT_BUILD_OUTPUT = """\
20:49:14  Done. PASS=93 WARN=0 ERROR=0 SKIP=0 NO-OP=0 TOTAL=93
retrieval-metrics import: collection bench: 8500 judgments for 10000 questions; run bench_run: 10000000 ranked \
docs; import 5.0 s, dbt loaded alongside in 2.3 s, then built in 6.1 s; published serving.duckdb (123.4 MiB), \
the tables of bench.duckdb; BI tools and notebooks read it read-only
"""


def test_import_build_s_last_line_gives_the_import_the_load_the_build_and_the_serving_copy_s_size() -> None:
    assert import_split(IMPORT_BUILD_OUTPUT) == {"import": 5.0, "load": 2.3, "build": 6.1, "serving_mib": 123.4}
    with pytest.raises(PeerFailed, match="no `import ... s"):
        import_split("retrieval-metrics import: collection bench: run r: 10 ranked docs\n")
    with pytest.raises(PeerFailed):
        import_split("")


def test_the_notes_and_the_split_table_show_where_the_command_s_time_went() -> None:
    split = {"import": 5.0, "load": 2.3, "build": 6.1, "other": 1.6, "serving_mib": 123.4, "noop_build": 9.8}
    ours = Result("ours", 12.7, 800, split=split)
    eleventh = Result("ours_11th", 13.97, 820, split={**split, "warehouse_mib": 1234.0, "prior_runs": 10})
    assert split_note(ours) == (
        "import 5.0 s (dbt loaded alongside in 2.3 s); build 6.1 s; the rest 1.6 s (start-up, publishing 123 MiB);"
        " a build with nothing to compute: 9.8 s"
    )
    note = split_note(eleventh, ours)
    assert note.startswith("run11 added to a copy of a warehouse of 10 runs (1234 MiB); import 5.0 s")
    assert note.endswith("; 1.10x ours (target <= 1.1x)")
    assert "x ours" not in split_note(eleventh)  # without ours, no ratio
    assert split_note(Result("pytrec_eval", 1.0, 10)) == ""

    table = split_table([ours, eleventh, Result("pytrec_eval", 1.0, 10)]).splitlines()
    assert len(table) == 4 and "dbt load" in table[0]
    assert table[2] == "| ours: empty warehouse | 12.7 | 5.0 | 2.3 | 6.1 | 1.6 | 9.8 |"
    assert table[3].startswith("| ours_11th: run11 added to 10 runs | 14.0 |")


def test_ours_11th_is_a_default_peer_and_needs_at_least_one_prior_run() -> None:
    assert options([]).peers == ["ours", "ours_11th", "pytrec_eval", "ranx", "duckdb_sql"]
    assert options([]).prior_runs == 10
    with pytest.raises(SystemExit):
        options(["--prior-runs", "0"])


def test_ours_11th_s_warehouse_is_built_once_then_reused_while_the_project_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commands: list[list[str]] = []

    def fake_measure(cmd: list[str], log_dir: Path, label: str, env: dict[str, str] | None = None) -> tuple:
        assert env is not None and env["RETRIEVAL_DB"] == str(tmp_path / "warehouse.duckdb")
        assert env["RETRIEVAL_SERVING_DB"] == str(tmp_path / "warehouse.serving.duckdb")
        commands.append(cmd)
        Path(env["RETRIEVAL_DB"]).write_text(f"{len(commands)} runs")
        Path(env["RETRIEVAL_SERVING_DB"]).write_text(f"{len(commands)} runs, published")
        return 1.0, 1, ""

    monkeypatch.setattr(benchmark, "measure", fake_measure)
    setup = OursSetup(tmp_path / "data" / "q20_d30_s3", tmp_path, prior_runs=3)
    prepare_prior_warehouse(setup, rows=600)
    assert setup.prior_error == "" and setup.prior_warehouse is not None
    assert setup.prior_warehouse.read_text() == "3 runs" and not (tmp_path / "warehouse.duckdb").exists()
    # its serving copy is kept beside it: the 11th run publishes over it, as after a user's tenth build
    assert benchmark.serving_of(setup.prior_warehouse).read_text() == "3 runs, published"
    assert [cmd[cmd.index("--run-id") + 1] for cmd in commands] == ["run01", "run02", "run03"]
    assert ["--qrels" in cmd for cmd in commands] == [True, False, False]
    assert all(cmd[-3:] == ["--build", "--vars", "{k_values: [1, 3, 10]}"] for cmd in commands)

    again = OursSetup(setup.data_dir, tmp_path, prior_runs=3)
    prepare_prior_warehouse(again, rows=600)  # the cache: nothing run
    assert again.prior_warehouse == setup.prior_warehouse and len(commands) == 3

    stamp = setup.prior_warehouse.with_suffix(".json")
    stamp.write_text(json.dumps({**json.loads(stamp.read_text()), "project": "another version"}))
    prepare_prior_warehouse(OursSetup(setup.data_dir, tmp_path, prior_runs=3), rows=600)
    assert len(commands) == 6  # another project: built again

    too_big = OursSetup(setup.data_dir, tmp_path, prior_runs=10)
    prepare_prior_warehouse(too_big, rows=100_000_000)
    assert too_big.prior_error.startswith("skipped: its warehouse would hold 1,100,000,000 run lines")
    assert len(commands) == 6


@pytest.mark.dbt
@pytest.mark.bench
def test_cli_runs_every_peer_and_they_agree_with_pytrec_eval(tmp_path: Path) -> None:
    markdown = tmp_path / "bench.md"
    command = [
        sys.executable, str(SCRIPT), "--questions", "20", "--docs-per-question", "30", "--seed", "3",
        "--workdir", str(tmp_path / "work"), "--peers", "ours,ours_11th,pytrec_eval,ranx,duckdb_sql",
        "--prior-runs", "1",
        "--markdown", str(markdown),
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, result.stdout + result.stderr

    lines = result.stdout.splitlines()
    for peer in ("ours", "ours_11th"):
        row = next(line for line in lines if line.startswith(peer + " "))
        assert float(row.split()[1]) > 0 and float(row.split()[2]) > 0
        assert re.search(r"import [\d.]+ s \(dbt loaded alongside in [\d.]+ s\); build [\d.]+ s; the rest", row)
        assert re.search(r"a build with nothing to compute: [\d.]+ s", row)
        assert any(line.startswith(f"check: pytrec_eval and {peer} agree to 1e-09") for line in lines)
    ranx = next(line for line in lines if line.startswith("check: pytrec_eval and ranx "))
    assert "DO NOT" not in ranx, ranx  # ranx agrees, or differs only where it breaks score ties its own way
    eleventh = next(line for line in lines if line.startswith("ours_11th "))
    assert "run02 added to a copy of a warehouse of 1 run" in eleventh
    assert re.search(r"[\d.]+x ours \(target <= 1.1x\)", eleventh)

    work = tmp_path / "work"
    assert sorted(p.name for p in (work / "ours_11th_cache").glob("*.duckdb")) == [
        "q20_d30_s3_1runs.duckdb", "q20_d30_s3_1runs.serving.duckdb"]
    assert not (work / "warehouse.serving.duckdb").exists()  # dropped after each round
    report = markdown.read_text()
    assert "| ours: empty warehouse |" in report and "| ours_11th: run02 added to 1 run |" in report
