"""The `retrieval-metrics` command's wrapper: --help lists every subcommand, and every subcommand answers bad input
(a bad argument, a bad file, a missing database, bad SQL, a database another process holds) with one line on
stderr, `retrieval-metrics <command>: error: ...`, exit code 2, no traceback and nothing written.

Fast tier: the commands run in-process (cli.main) where they can, in a child where the environment or a second
process matters; none of them gets as far as dbt.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from conftest import cli_env, run_cli
from retrieval_metrics.cli import main, parser

SUBCOMMANDS = ["rank", "import", "fuse", "remove", "settings", "pool", "judge", "build", "list", "scorecard",
               "report", "export", "query", "bench"]


def test_help_lists_every_subcommand() -> None:
    result = run_cli("--help")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert result.stdout.startswith("usage: retrieval-metrics ")
    for name in SUBCOMMANDS:
        assert re.search(rf"^ +{name}\b", result.stdout, re.MULTILINE), (name, result.stdout)
    assert parser().command_names == set(SUBCOMMANDS)  # and no other


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file and directory under `folder`: (size, mtime in ns). 'Nothing written' is checked against it."""
    return {
        str(path.relative_to(folder)): (path.stat().st_size, path.stat().st_mtime_ns) for path in folder.rglob("*")
    }


def case(name: str, argv: list[str], where: str, message: str, **marks: object) -> object:
    """One bad-input case: argv, the prefix stderr starts with, and what its one line says."""
    return pytest.param(argv, where, message, id=name, **marks)  # type: ignore[arg-type]


# In argv, DB is a database file that does not exist, EMPTY one that exists and has no tables, OUT an output
# path; every command runs with RETRIEVAL_DB=DB.
BAD_INPUT = [
    case("rank-unknown-retriever", ["rank", "--retriever", "nope", "--db", "DB"],
         "retrieval-metrics rank", "unknown retriever 'nope' (choose from keyword_overlap, keyword_normalized, bm25, "
         "dense, or name your own as package.module:name)"),
    case("rank-all-with-run-id", ["rank", "--all", "--run-id", "x", "--db", "DB"],
         "retrieval-metrics rank", "--run-id names a single run: use it with --retriever, not --all"),
    case("rank-bad-collection", ["rank", "--retriever", "bm25", "--collection", "a b", "--db", "EMPTY"],
         "retrieval-metrics rank", "collection 'a b' is not a plain identifier"),
    case("import-bad-collection", ["import", "--collection", "a b", "--qrels", "qrels.txt", "--db", "DB"],
         "retrieval-metrics import", "collection 'a b' is not a plain identifier"),
    case("import-nothing", ["import", "--collection", "tiny", "--db", "EMPTY"],
         "retrieval-metrics import", "nothing to import: give --qrels, --beir, --run and/or --tags"),
    case("build-serving-is-the-build-db", ["build"],
         "retrieval-metrics build", "the serving copy and the build database are the same file"),
    case("list-missing-db", ["list", "--db", "DB"],
         "retrieval-metrics list", "does not exist: nothing written yet"),
    case("scorecard-missing-db", ["scorecard", "--db", "DB"],
         "retrieval-metrics scorecard", "does not exist: run `make run` first"),
    case("scorecard-no-marts", ["scorecard", "--db", "EMPTY"],
         "retrieval-metrics scorecard", "has no question_metrics, run_metrics"),
    case("export-no-marts", ["export", "--format", "csv", "--out", "OUT", "--db", "EMPTY"],
         "retrieval-metrics export", "run `make build` first"),
    case("report-missing-db", ["report", "--db", "DB", "--out", "OUT"],
         "retrieval-metrics report", "does not exist: run `make run` first"),
    case("report-no-marts", ["report", "--db", "EMPTY", "--out", "OUT"],
         "retrieval-metrics report", "has no question_metrics, run_metrics"),
    case("export-missing-db", ["export", "--format", "csv", "--out", "OUT", "--db", "DB"],
         "retrieval-metrics export", "does not exist: run `make run` first"),
    case("export-trec-without-run-id",
         ["export", "--format", "trec", "--collection", "docent", "--out", "-", "--db", "EMPTY"],
         "retrieval-metrics export", "--format trec needs --collection and --run-id (exactly one run)"),
    case("export-csv-to-stdout", ["export", "--format", "csv", "--out", "-", "--db", "EMPTY"],
         "retrieval-metrics export", "--out - (stdout) is only for --format trec"),
    case("query-missing-db", ["query", "select 1", "--db", "DB"],
         "retrieval-metrics query", "does not exist: run `make run` first"),
    case("query-bad-sql", ["query", "selec 1", "--db", "EMPTY"],
         "retrieval-metrics query", 'Parser Error: syntax error at or near "selec"'),
    case("query-no-such-table", ["query", "select * from run_metrics", "--db", "EMPTY"],
         "retrieval-metrics query", "Table with name run_metrics does not exist"),
    case("query-two-statements", ["query", "select 1; select 2", "--db", "EMPTY"],
         "retrieval-metrics query", "query runs one statement, not 2"),
    case("query-copy-to", ["query", "copy (select 1) to 'OUT'", "--db", "EMPTY"],
         "retrieval-metrics query", "query only reads: COPY is refused"),
    case("query-export-database", ["query", "export database 'OUT'", "--db", "EMPTY"],
         "retrieval-metrics query", "query only reads: EXPORT is refused"),
    case("query-attach", ["query", "attach 'OUT' as other", "--db", "EMPTY"],
         "retrieval-metrics query", "query only reads: ATTACH is refused"),
    case("query-install", ["query", "install httpfs", "--db", "EMPTY"],
         "retrieval-metrics query", "query only reads: LOAD is refused"),
    case("bench-bad-option", ["bench", "--bogus"],
         "retrieval-metrics bench", "unrecognized arguments: --bogus"),
    case("bench-unknown-peer", ["bench", "--peers", "ours,trec_eval"],
         "retrieval-metrics bench", "--peers takes some of ours,ours_11th,pytrec_eval,ranx,duckdb_sql"),
    case("unknown-subcommand", ["frobnicate"],
         "retrieval-metrics", "argument COMMAND: invalid choice: 'frobnicate'"),
    case("missing-subcommand", [],
         "retrieval-metrics", "the following arguments are required: COMMAND"),
]  # fmt: skip


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A working directory of its own (relative outputs land in it), with an empty database EMPTY and
    RETRIEVAL_DB pointing at a database DB that does not exist (never the user's retrieval.duckdb)."""
    folder = tmp_path / "place"
    folder.mkdir()
    duckdb.connect(str(folder / "empty.duckdb")).close()
    (folder / "qrels.txt").write_text("1 0 d1 1\n")
    monkeypatch.chdir(folder)
    monkeypatch.setenv("RETRIEVAL_DB", str(folder / "missing.duckdb"))
    monkeypatch.delenv("RETRIEVAL_SERVING_DB", raising=False)
    yield folder


@pytest.mark.parametrize(("argv", "where", "message"), BAD_INPUT)
def test_bad_input_gets_one_line_exit_2_and_writes_nothing(
    place: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    argv: list[str],
    where: str,
    message: str,
) -> None:
    paths = {"DB": place / "missing.duckdb", "EMPTY": place / "empty.duckdb", "OUT": place / "out"}
    argv = [str(paths[a]) if a in paths else a for a in argv]
    if argv[:1] == ["build"]:
        monkeypatch.setenv("RETRIEVAL_SERVING_DB", os.environ["RETRIEVAL_DB"])
    before = snapshot(place)
    code = main(argv)
    out, err = capfd.readouterr()
    assert code == 2, (code, out, err)
    assert err.startswith(f"{where}: error: ") and err.count("\n") == 1 and err.endswith("\n"), err
    assert message in err, err
    assert "Traceback" not in err and out == "", out
    assert snapshot(place) == before  # no database, .wal, output directory or file created, nothing changed


@pytest.fixture
def holder(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """A process that holds the build file open (read-only or read-write), like a notebook would."""
    database = tmp_path / "retrieval.duckdb"
    duckdb.connect(str(database)).close()
    code = (
        f"import duckdb, sys; c = duckdb.connect({str(database)!r}, read_only={request.param}); "
        "print('ready', flush=True); sys.stdin.read()"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    try:
        yield process, database
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=30)


@pytest.mark.parametrize("holder", [True, False], indirect=True, ids=["held-read-only", "held-read-write"])
@pytest.mark.parametrize(
    "command",
    [["build"], ["import", "--collection", "c", "--qrels", "QRELS"], ["rank", "--retriever", "keyword_overlap"]],
    ids=["build", "import", "rank"],
)
def test_a_locked_database_gets_one_line_naming_the_holder(
    holder: tuple[subprocess.Popen[str], Path], tmp_path: Path, command: list[str]
) -> None:
    process, database = holder
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    args = [str(tmp_path / "qrels.txt") if a == "QRELS" else a for a in command]
    target = tmp_path / "target"
    result = run_cli(*args, "--wait", "0", env=cli_env(database, target))  # writers wait; 0: not at all
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    # retrieval-metrics rank: error: /tmp/.../retrieval.duckdb is locked by PID 4242 (python -c import duckdb, ...):
    #     close that connection, or point readers at /tmp/.../serving.duckdb (read-only), then re-run
    holder_command = f"{Path(sys.executable).name} -c import duckdb, sys; c = duckdb.connect("
    assert lines[0].startswith(
        f"retrieval-metrics {command[0]}: error: {database} is locked by PID {process.pid} ({holder_command}"
    ), lines[0]
    assert lines[0].endswith(
        f"): close that connection, or point readers at {tmp_path / 'serving.duckdb'} (read-only), then re-run"
        " (waited 0 s, --wait)"
    ), lines[0]
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert not target.exists()  # build and rank stopped before dbt: dbt would have created its target and logs
    assert not (tmp_path / "serving.duckdb").exists() and not Path(f"{database}.wal").exists()
