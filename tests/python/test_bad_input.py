"""One bad input never breaks the warehouse (issue 28). Every case is refused with one line naming the file and
line (or the key), exit 2, and the warehouse unchanged: the checksums of its raw tables and of its serving copy
equal before and after (conftest.warehouse_checksums); and what the door takes, builds.

(A) plug-in retrievers that hang, exit or return nonsense; (B) ids with a line break, a directory given for a
file, fusion parameters SQL cannot take; (C) TREC files with `#` comment lines, read as trec_eval 10.0 reads
them; (D) runs ranking docs their collection's corpus lacks; (E) BEIR folders a build would fail on; (F) after
refusals, the next good imports and the build succeed; (G) judgments and runs naming a question their collection
does not have, where it knows its questions; (H) an unknown collection, doc_order without documents, a query
that is not one read-only statement. Settings (--vars) and failed builds are in
test_build_failures.py, removal in test_remove.py.

Without dbt but in (F): `rank` reads the collection from raw tables written by the test (see `ranked`), the other
commands run in-process (cli.main).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

import duckdb
import pytest

from conftest import Warehouse, copy_project, run_cli, warehouse_checksums
from retrieval_metrics import api
from retrieval_metrics.cli import main, parser
from retrieval_metrics.plugins import SEARCH_TIMEOUT, run_plugin
from retrieval_metrics.retrievers import Document
from retrieval_metrics.serving import publish
from retrieval_metrics.warehouse import InputError, connect, transaction

PLUGIN = "misbehaving:Misbehaving"
# A plug-in module, written to a folder on the commands' PYTHONPATH. Misbehaving answers every question with
# two docs, except the question whose text holds `trigger`: there it misbehaves as `problem` says, in `search`
# (or, with when=build, while it is built).
PLUGIN_SOURCE = '''
import sys
import threading
import time


class Misbehaving:
    def __init__(self, documents, problem="", trigger="", when="search"):
        self.doc_ids = [d.doc_id for d in documents[:2]]
        self.problem, self.trigger = problem, trigger
        self.thread = threading.get_ident()
        if when == "build":
            self.misbehave()

    def search(self, question, k):
        if threading.get_ident() != self.thread:
            raise RuntimeError("searched on another thread than the one that built it")
        if self.trigger and self.trigger in question:
            return self.misbehave()
        return [(self.doc_ids[0], 2.0), (self.doc_ids[1], 1)]

    def misbehave(self):
        first = self.doc_ids[0]
        if self.problem == "hang":
            threading.Event().wait()
        if self.problem == "spin":
            while True:
                pass
        if self.problem == "slow":
            time.sleep(0.3)
            return [(first, 1.0)]
        if self.problem == "exit":
            sys.exit(3)
        if self.problem == "exit0":
            sys.exit(0)
        if self.problem == "interrupt":
            raise KeyboardInterrupt
        if self.problem == "generator":
            return self.fails_midway()
        return {
            "none": None,
            "int": 7,
            "dict": {first: 1.0},
            "str": first,
            "huge": [(first, 10**400)],
            "huge_negative": [(first, -(10**400))],
            "inf": [(first, float("inf"))],
            "nan": [(first, float("nan"))],
        }[self.problem]

    def fails_midway(self):
        yield self.doc_ids[0], 1.0
        yield self.doc_ids[1], 1 / 0
'''

DOCS = [("d1", "Pricing", "the free plan costs nothing"), ("d2", "Keys", "api keys authenticate requests"),
        ("d3", "Limits", "rate limits per minute")]  # fmt: skip
QUESTIONS = [("q1", "what does the free plan cost"), ("q2", "how do api keys work"), ("q3", "rate limits")]
RAW_TABLES = ("runs", "rankings", "question_latencies", "chunk_rankings", "qrels", "questions", "documents")


def raw_rows(db_path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every raw table a command writes, in a fixed order: 'as it was' is checked against this."""
    with duckdb.connect(str(db_path), read_only=True) as con:
        present = {name for (name,) in con.execute(
            "select table_name from information_schema.tables where table_schema = 'raw'").fetchall()}  # fmt: skip
        return {
            table: con.execute(f"select * from raw.{table} order by all").fetchall()
            for table in RAW_TABLES
            if table in present
        }


def one_error_line(err: str, command: str) -> str:
    """The message of the one error line a command printed on stderr (after any lines of the writers' queue)."""
    lines = [line for line in err.splitlines() if f"retrieval-metrics {command}: error: " in line]
    assert len(lines) == 1 and err.endswith(lines[0] + "\n"), err
    return lines[0].partition(": error: ")[2]


# --- (A) plug-in retrievers that misbehave ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def plugin_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("plugin")
    (folder / "misbehaving.py").write_text(PLUGIN_SOURCE)
    return folder


@pytest.fixture(scope="module")
def ranked(plugin_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    """A warehouse (on a private copy of the project) that holds collection mini's documents and questions where
    `rank` reads them (raw.documents, raw.questions); then run `steady` of it, by the plug-in behaving."""
    warehouse = copy_project(tmp_path_factory.mktemp("ranked"))
    with connect(warehouse.db_path) as con, transaction(con):
        con.executemany("insert into raw.documents values ('mini', ?, ?, ?)", DOCS)
        con.executemany("insert into raw.questions values ('mini', ?, ?)", QUESTIONS)
    result = rank(warehouse, plugin_folder, "--run-id", "steady")
    assert result.returncode == 0 and "wrote run mini/steady: 6 ranked docs for 3 questions" in result.stdout, result
    return warehouse


def rank(warehouse: Warehouse, plugin_folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`retrieval-metrics rank --collection mini --retriever misbehaving:Misbehaving ARGS`, the plug-in on
    PYTHONPATH."""
    env = {**warehouse.env, "PYTHONPATH": str(plugin_folder)}
    return run_cli("rank", "--collection", "mini", "--retriever", PLUGIN, *args, env=env)


def params(problem: str, *, when: str = "search") -> list[str]:
    """The plug-in's parameters: misbehave as `problem` says for q2 (its text holds 'api'), or while built."""
    return ["--param", f"problem={problem}", "--param", "trigger=api", "--param", f"when={when}"]


MISBEHAVIOURS = [
    ("exit", "search", "question 'q2': the retriever raised SystemExit: 3"),
    ("exit0", "search", "question 'q2': the retriever raised SystemExit: 0"),
    ("interrupt", "search", "question 'q2': the retriever raised KeyboardInterrupt"),
    ("exit", "build", f"retriever '{PLUGIN}' could not be built: SystemExit: 3"),
    ("interrupt", "build", f"retriever '{PLUGIN}' could not be built: KeyboardInterrupt"),
    ("none", "search", "question 'q2': the retriever returned None, not a list of (doc_id, score) pairs"),
    ("int", "search", "question 'q2': the retriever returned an int, not a list of (doc_id, score) pairs"),
    ("dict", "search", "question 'q2': the retriever returned a dict, not a list of (doc_id, score) pairs"),
    ("str", "search", "question 'q2': the retriever returned a str, not a list of (doc_id, score) pairs"),
    ("generator", "search", "question 'q2': the retriever raised ZeroDivisionError: division by zero"),
    ("huge", "search", "question 'q2': doc 'd1' has a non-finite score (an int beyond a float's range)"),
    ("huge_negative", "search", "question 'q2': doc 'd1' has a non-finite score (an int beyond a float's range)"),
    ("inf", "search", "question 'q2': doc 'd1' has a non-finite score (inf)"),
    ("nan", "search", "question 'q2': doc 'd1' has a non-finite score (nan)"),
]


@pytest.mark.parametrize(("problem", "when", "message"), MISBEHAVIOURS, ids=[f"{p}-{w}" for p, w, _ in MISBEHAVIOURS])
def test_a_misbehaving_plugin_fails_the_run_in_one_line_and_writes_nothing(
    ranked: Warehouse, plugin_folder: Path, problem: str, when: str, message: str
) -> None:
    before = warehouse_checksums(ranked.db_path)
    result = rank(ranked, plugin_folder, "--run-id", "steady", *params(problem, when=when))
    assert result.returncode == 2 and one_error_line(result.stderr, "rank") == message, result.stderr
    assert "Traceback" not in result.stderr and warehouse_checksums(ranked.db_path) == before


@pytest.mark.parametrize("problem", ["hang", "spin"])
def test_a_search_that_takes_longer_than_the_timeout_fails_the_run_and_the_command_exits(
    ranked: Warehouse, plugin_folder: Path, problem: str
) -> None:
    """A search that never returns (blocked, or busy on the CPU) fails the run once --timeout has passed, and the
    command exits: the worker thread it leaves behind does not keep the process alive."""
    before = warehouse_checksums(ranked.db_path)
    started = time.monotonic()
    result = rank(ranked, plugin_folder, "--run-id", "steady", "--timeout", "1.5", *params(problem))
    assert time.monotonic() - started < SEARCH_TIMEOUT  # the default timeout never came into it
    message = "question 'q2': the search took longer than the timeout, 1.5 s (--timeout)"
    assert result.returncode == 2 and one_error_line(result.stderr, "rank") == message, result.stderr
    assert warehouse_checksums(ranked.db_path) == before


def test_a_slow_search_within_the_timeout_is_kept_with_its_latency(ranked: Warehouse, plugin_folder: Path) -> None:
    result = rank(ranked, plugin_folder, "--run-id", "slow", "--timeout", "20", *params("slow"))
    assert result.returncode == 0, result.stderr
    latencies = dict(ranked.rows("select question_id, latency_ms from raw.question_latencies where run_id = 'slow'"))
    assert latencies["q2"] >= 300 and latencies["q1"] < 300


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "--timeout must be a positive number of seconds, not 0"),
        ("-1", "--timeout must be a positive number of seconds, not -1"),
        ("nan", "--timeout must be a positive number of seconds, not nan"),
        ("inf", "--timeout must be a positive number of seconds, not inf"),
        ("soon", "argument --timeout: invalid float value: 'soon'"),
    ],
)
def test_a_bad_timeout_is_refused_before_anything_runs(tmp_path: Path, value: str, message: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    assert main(["rank", "--retriever", PLUGIN, "--timeout", value, "--db", str(tmp_path / "w.duckdb")]) == 2
    assert one_error_line(capsys.readouterr().err, "rank") == message
    assert not (tmp_path / "w.duckdb").exists()


def test_the_timeout_defaults_to_30_seconds() -> None:
    assert parser().parse_args(["rank", "--retriever", PLUGIN]).timeout == SEARCH_TIMEOUT == 30


def test_the_worker_thread_ends_after_a_run(plugin_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process (the Python API's way), a run leaves no thread behind; the plug-in is built and searched on
    one thread (it raises otherwise)."""
    monkeypatch.syspath_prepend(str(plugin_folder))
    docs = [Document(*doc) for doc in DOCS]
    run = run_plugin(PLUGIN, {}, docs, QUESTIONS, 3, timeout=5)
    assert run.question_ids == ["q1", "q1", "q2", "q2", "q3", "q3"] and run.scores == [2.0, 1.0] * 3
    deadline = time.monotonic() + 5
    while any(t.name == "retrieval-metrics plug-in" for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not [t for t in threading.enumerate() if t.name == "retrieval-metrics plug-in"]


# --- (B) identifiers and arguments ---------------------------------------------------------------------------


@pytest.fixture
def fusable(tmp_path: Path) -> Path:
    """A warehouse with collection gen's judgments and runs a and b."""
    path = tmp_path / "fusable.duckdb"
    with connect(path) as con, transaction(con):
        con.execute("insert into raw.qrels values ('gen', 'q1', 'd1', 1)")
    api.write_run("gen", "a", [("q1", "d1", 1.0), ("q1", "d2", 0.5)], database=path)
    api.write_run("gen", "b", [("q1", "d2", 3.0), ("q2", "d1", 1.0)], database=path)
    return path


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["import", "--collection", "good\n", "--qrels", "Q"], "collection 'good\\n' is not a plain identifier"),
        (["import", "--collection", "gen", "--run", "R", "--run-id", "good\n"], "run id 'good\\n' is not a plain"),
        (["fuse", "--collection", "gen", "--runs", "a,b", "--run-id", "ab\n"], "run id 'ab\\n' is not a plain"),
        (["fuse", "--collection", "gen\n", "--runs", "a,b"], "collection 'gen\\n' is not a plain identifier"),
        (["rank", "--retriever", "bm25", "--run-id", "good\n"], "run id 'good\\n' is not a plain identifier"),
        (["rank", "--retriever", "bm25", "--collection", "\ngood"], "collection '\\ngood' is not a plain identifier"),
    ],
)
def test_an_id_with_a_line_break_is_not_a_plain_identifier(
    fusable: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 1.0 t\n")
    args = [str(tmp_path / "q.txt") if a == "Q" else str(tmp_path / "r.txt") if a == "R" else a for a in args]
    before = warehouse_checksums(fusable)
    assert main([*args, "--db", str(fusable)]) == 2
    error = one_error_line(capsys.readouterr().err, args[0])
    assert error.startswith(message) and error.endswith("is not a plain identifier (letters, digits, '_', '.', '-')")
    assert warehouse_checksums(fusable) == before


def test_a_directory_given_for_a_file_is_named_as_one(
    fusable: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "a folder"
    folder.mkdir()
    beir, beir_corpus = tmp_path / "beir", tmp_path / "beir-corpus"
    for root in (beir, beir_corpus):
        (root / "qrels").mkdir(parents=True)
        for name in ("corpus.jsonl", "queries.jsonl"):
            (root / name).write_text('{"_id": "x", "text": "x"}\n')
        (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nx\tx\t1\n")
    (beir / "qrels" / "test.tsv").unlink()
    (beir / "qrels" / "test.tsv").mkdir()  # a directory where the test split's qrels file goes
    (beir_corpus / "corpus.jsonl").unlink()
    (beir_corpus / "corpus.jsonl").mkdir()
    cases = [
        (["--run", str(folder), "--run-id", "r"], f"{folder} is a directory, not a file"),
        (["--qrels", str(folder)], f"{folder} is a directory, not a file"),
        (["--qrels", str(folder / "missing.txt")], f"{folder / 'missing.txt'}: no such file"),
        (["--beir", str(beir)], f"{beir / 'qrels' / 'test.tsv'} is a directory, not a file"),
        (["--beir", str(beir_corpus)], f"{beir_corpus / 'corpus.jsonl'} is a directory, not a file"),
    ]
    before = warehouse_checksums(fusable)
    for args, message in cases:
        assert main(["import", "--collection", "gen", *args, "--db", str(fusable)]) == 2, args
        assert one_error_line(capsys.readouterr().err, "import") == message
    assert warehouse_checksums(fusable) == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rrf-k", "inf"], "--rrf-k must be a positive finite number, not inf"),
        (["--rrf-k=-inf"], "--rrf-k must be a positive finite number, not -inf"),
        (["--rrf-k", "nan"], "--rrf-k must be a positive finite number, not nan"),
        (["--rrf-k", "-1"], "--rrf-k must be a positive finite number, not -1"),
        (["--rrf-k", "0"], "--rrf-k must be a positive finite number, not 0"),
        (["--rrf-k", "1e400"], "--rrf-k must be a positive finite number, not inf"),
        (["--method", "combsum", "--rrf-k", "inf"], "--rrf-k must be a positive finite number, not inf"),
        (["--top-k", "0"], "--top-k must be at least 1, not 0"),
        (["--top-k", "-3"], "--top-k must be at least 1, not -3"),
    ],
)
def test_fusion_parameters_sql_cannot_take_are_refused_in_one_line(
    fusable: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    before = warehouse_checksums(fusable)
    assert main(["fuse", "--collection", "gen", "--runs", "a,b", *args, "--db", str(fusable)]) == 2
    assert one_error_line(capsys.readouterr().err, "fuse") == message
    assert warehouse_checksums(fusable) == before


def test_a_large_finite_rrf_k_still_fuses(fusable: Path) -> None:
    assert main(["fuse", "--collection", "gen", "--runs", "a,b", "--rrf-k", "1e300", "--db", str(fusable)]) == 0
    with duckdb.connect(str(fusable), read_only=True) as con:
        (parameters,) = con.execute("select parameters from raw.runs where run_id = 'rrf-a-b'").fetchone()
    assert json.loads(parameters)["k"] == 1e300


# --- (C) comment lines in TREC files ---------------------------------------------------------------------------

# Like the block ir_metadata writes on top of a run file: the run's description as YAML in `#` lines
IR_METADATA = """\
# ir_metadata.start
# tag: bm25-tuned
# actor:
#   team: example
# research goal:
#   description: |
#     BM25, k1 = 0.9, b = 0.4: six words and more here
# platform:
#   software:
#     libraries:
#       - pyserini: 0.22.1
# ir_metadata.end
"""
RUN = "1 Q0 d3 9 1.0 tagA\n1 Q0 d1 8 1.0 tagA\n1 Q0 d#2 7 5e-1 tagA\n07 Q0 d5 1 3 tagA\n99 Q0 d1 1 1 tagA\n"
QRELS = "1 0 d1 1\n1 0 d#2 2\n1 0 d3 0\n07 0 d1 1\n"


def commented(lines: str, block: str = IR_METADATA, *, indented: bool = False) -> str:
    """The lines with `block` on top and comments between them: one that reads like a line of the file,
    commented out (a trec_eval 10.0 comment), a bare '#', and, if `indented`, one with blanks before its '#'."""
    first, *rest = lines.splitlines(keepends=True)
    looks_like_data = "#1 Q0 d9 1 99 tagX\n" if first.split()[1] == "Q0" else "# 1 0 d9 3\n"
    between = [looks_like_data, "#\n", "\n", *(["  \t# indented\n"] if indented else [])]
    return block + first + "".join(between) + "".join(rest) + "# the end\n"


def raw_rows_without_times(db_path: Path) -> dict[str, list[tuple[object, ...]]]:
    """raw_rows, raw.runs without the time and version of writing."""
    rows = raw_rows(db_path)
    with duckdb.connect(str(db_path), read_only=True) as con:
        rows["runs"] = con.execute(
            "select collection_id, run_id, retriever, parameters from raw.runs order by all").fetchall()  # fmt: skip
    return rows


def import_files(folder: Path, qrels: str, run: str) -> dict[str, list[tuple[object, ...]]]:
    """Collection tiny imported from these qrels and run files (qrels.txt and run.txt in `folder`) into a new
    warehouse there: raw_rows_without_times."""
    folder.mkdir()
    (folder / "qrels.txt").write_text(qrels)
    (folder / "run.txt").write_text(run)
    db = ["--db", str(folder / "warehouse.duckdb")]
    assert main(["import", "--collection", "tiny", "--qrels", str(folder / "qrels.txt"), *db]) == 0
    assert main(["import", "--collection", "tiny", "--run", str(folder / "run.txt"), "--run-id", "r", *db]) == 0
    return raw_rows_without_times(folder / "warehouse.duckdb")


@pytest.mark.parametrize(
    ("tabs", "indented", "careful"),
    [(False, False, False), (True, False, False), (False, True, True)],
    ids=["spaces, one pass", "tabs, one pass", "an indented comment: careful read"],
)
def test_comment_lines_are_skipped_and_the_rows_are_those_of_the_file_without_them(
    tmp_path: Path, careful_reads: list[Path], tabs: bool, indented: bool, careful: bool
) -> None:
    """A run and a qrels file with an ir_metadata block on top and comments between their lines import the rows
    of the same files without the comments: nothing of the comments (not the commented-out line that reads like
    data, not the tag in the block), and a '#' inside a doc id kept."""
    qrels, run = (QRELS.replace(" ", "\t"), RUN.replace(" ", "\t")) if tabs else (QRELS, RUN)
    plain = import_files(tmp_path / "plain", qrels, run)
    with_comments = import_files(tmp_path / "commented", commented(qrels, indented=indented),
                                 commented(run, indented=indented))  # fmt: skip
    assert with_comments == plain
    assert careful_reads == ([tmp_path / "commented" / "run.txt"] if careful else [])
    assert ("tiny", "r", "tagA", json.dumps({"format": "trec", "source": "run.txt", "tag": "tagA"})) in plain["runs"]
    assert [doc for _, _, q, doc, *_ in sorted(plain["rankings"], key=lambda row: row[4]) if q == "1"] == [
        "d3", "d1", "d#2"]  # trec_eval's order: score descending, the tie to the larger docno
    assert not [row for table in with_comments.values() for row in table if "d9" in row]


# The file's real line numbers, comments and blank lines counted: the block is lines 1-12
BLOCK_LINES = IR_METADATA.count("\n")
BAD_FILES = [
    ("run", "1 Q0 d1 1 1.0 t\n# a comment\n1 Q0 d2 2 high t\n",
     f"run.txt:{BLOCK_LINES + 3}: score 'high' is not a number"),
    ("run", "1 Q0 d1 1 1.0 t\n\n#1 Q0 d2 2\n1 Q0 d2 2 0.5\n", f"run.txt:{BLOCK_LINES + 4}: expected 6 fields"),
    ("run", "1 Q0 d1 1 1 t\n#1 Q0 d1 3 0 t\n1 Q0 d1 3 0 t\n",
     f"run.txt:{BLOCK_LINES + 3}: duplicate document in run for question '1', doc 'd1'"),
    ("run", "\n# only comments\n", "run.txt: empty file"),
    ("qrels", "1 0 d1 1\n# 1 0 d2 x\n1 0 d2 high\n",
     f"qrels.txt:{BLOCK_LINES + 3}: relevance 'high' is not an integer"),
    ("qrels", "1 0 d1 1\n#\n1 0 d2\n", f"qrels.txt:{BLOCK_LINES + 3}: expected 4 fields"),
    ("qrels", "1 0 d1 1\n# 1 0 d1 2\n1 0 d1 2\n",
     f"qrels.txt:{BLOCK_LINES + 3}: duplicate judgment for question '1', doc 'd1'"),
    ("qrels", "# only comments\n", "qrels.txt: empty file"),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "lines", "message"), BAD_FILES, ids=[m.partition(" ")[2] for _, _, m in BAD_FILES])
def test_errors_after_comment_lines_name_the_files_real_line(
    warehouse: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, lines: str, message: str
) -> None:
    (tmp_path / "good_qrels.txt").write_text(QRELS)
    db = ["--db", str(warehouse.db_path)]
    assert main(["import", "--collection", "tiny", "--qrels", str(tmp_path / "good_qrels.txt"), *db]) == 0
    capsys.readouterr()
    before = warehouse_checksums(warehouse.db_path)
    path = tmp_path / "bad" / f"{kind}.txt"
    path.parent.mkdir()
    path.write_text(IR_METADATA + lines)
    args = ["--run", str(path), "--run-id", "r"] if kind == "run" else ["--qrels", str(path)]
    assert main(["import", "--collection", "tiny", *args, *db]) == 2
    assert one_error_line(capsys.readouterr().err, "import").startswith(f"{tmp_path / 'bad'}/{message}")
    assert warehouse_checksums(warehouse.db_path) == before


ERROR = "retrieval-metrics import: error: "
CORPUS = [{"_id": "a", "title": "A", "text": "alpha"}, {"_id": "b", "title": "B", "text": "beta"}]
QUERIES = [{"_id": "q1", "text": "first?"}, {"_id": "q2", "text": "second?"}]
BEIR_QRELS = "q1\ta\t1\nq2\tb\t2\n"
HEADER = "query-id\tcorpus-id\tscore\n"


def import_(warehouse: Warehouse, *args: str) -> int:
    """`retrieval-metrics import ARGS --db WAREHOUSE`, in-process."""
    return main(["import", *args, "--db", str(warehouse.db_path)])


def write_beir(folder: Path, corpus_lines: list[str], query_lines: list[str], qrels: str) -> Path:
    """A BEIR folder from its files' lines as written (JSON text, so that a bad record can be spelled out)."""
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(line + "\n" for line in corpus_lines))
    (folder / "queries.jsonl").write_text("".join(line + "\n" for line in query_lines))
    (folder / "qrels" / "test.tsv").write_text(qrels)
    return folder


def good_beir(folder: Path) -> Path:
    return write_beir(folder, [json.dumps(d) for d in CORPUS], [json.dumps(q) for q in QUERIES], HEADER + BEIR_QRELS)


def assert_refused(
    warehouse: Warehouse, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    """The import refuses with exit 2 and one line `ERROR...message...`, and leaves every raw table as it was."""
    before = warehouse_checksums(warehouse.db_path)
    code = import_(warehouse, *args)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith(ERROR) and message in err, err
    assert warehouse_checksums(warehouse.db_path) == before


@pytest.fixture
def beir_loaded(warehouse: Warehouse, tmp_path: Path) -> Warehouse:
    """Collection `sci`, imported from a BEIR folder (a corpus of docs a and b), with run r1."""
    (tmp_path / "r1.txt").write_text("q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t\n")
    folder = good_beir(tmp_path / "sci")
    assert import_(warehouse, "--collection", "sci", "--beir", str(folder), "--run", str(tmp_path / "r1.txt"),
                   "--run-id", "r1") == 0  # fmt: skip
    return warehouse


# --- (D) runs against a collection's corpus ---------------------------------------------------------------------

BAD_RUNS = [
    ("q1 Q0 a 1 2 t\nq2 Q0 nosuchdoc 1 1 t\n", [], "run.txt:2: doc 'nosuchdoc' is not a document of collection 'sci'"),
    # the careful read (tabs and spaces mixed) checks the same
    ("q1\tQ0 a 1 2 t\n\nq2 Q0 b 1 1 t\nq2 Q0 zz 2 0 t\n", [], "run.txt:4: doc 'zz' is not a document of collection"),
    # a chunk run: its chunks' docs
    ("q1 Q0 a#0 1 2 t\nq1 Q0 gone#3 2 1 t\n", ["--chunks"], "run.txt:2: doc 'gone' is not a document of collection"),
]


@pytest.mark.parametrize(("content", "extra", "message"), BAD_RUNS, ids=["one pass", "careful read", "chunks"])
def test_a_run_ranking_a_doc_the_corpus_lacks_is_refused(
    beir_loaded: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, extra: list[str],
    message: str,
) -> None:  # fmt: skip
    path = tmp_path / "bad" / "run.txt"
    path.parent.mkdir()
    path.write_text(content)
    for run_id in ("r1", "r2"):  # replacing a run, or a new one
        assert_refused(beir_loaded, capsys, ["--collection", "sci", "--run", str(path), "--run-id", run_id, *extra],
                       message)  # fmt: skip


def test_a_run_imported_with_its_beir_folder_is_checked_against_that_corpus(
    warehouse: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = good_beir(tmp_path / "sci")
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 2 t\nq1 Q0 c 2 1 t\n")
    args = ["--collection", "sci", "--beir", str(folder), "--run", str(tmp_path / "run.txt"), "--run-id", "r"]
    assert_refused(warehouse, capsys, args, "run.txt:2: doc 'c' is not a document of collection 'sci'")


def test_a_docent_run_ranking_a_doc_the_seeds_lack_is_refused_before_any_build(
    warehouse: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Docent's documents are the seed file the next build loads, whether or not a build loaded it yet."""
    (tmp_path / "run.txt").write_text("rate_limit_status Q0 ratelimits 1 2 t\nrate_limit_status Q0 nosuchdoc 2 1 t\n")
    args = ["--collection", "docent", "--run", str(tmp_path / "run.txt"), "--run-id", "mine"]
    assert_refused(warehouse, capsys, args, "run.txt:2: doc 'nosuchdoc' is not a document of collection 'docent'")
    with pytest.raises(InputError, match="unknown doc id 'nosuchdoc' \\(not a document of 'docent'\\)"):
        api.write_run("docent", "mine", [("rate_limit_status", "nosuchdoc", 1.0)], database=warehouse.db_path)
    assert "raw.runs" not in warehouse_checksums(warehouse.db_path)


def test_a_new_corpus_that_lacks_a_doc_an_earlier_run_ranks_is_refused(
    beir_loaded: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    smaller = write_beir(tmp_path / "smaller", [json.dumps(CORPUS[0])], [json.dumps(QUERIES[0])], HEADER + "q1\ta\t1\n")
    assert_refused(beir_loaded, capsys, ["--collection", "sci", "--beir", str(smaller)],
                   "corpus.jsonl: no doc 'b', which run 'r1' of collection 'sci' ranks for question 'q1'")  # fmt: skip
    (tmp_path / "r1-again.txt").write_text("q1 Q0 a 1 2 t\n")  # the run again, in the same command: taken
    assert import_(beir_loaded, "--collection", "sci", "--beir", str(smaller), "--run", str(tmp_path / "r1-again.txt"),
                   "--run-id", "r1") == 0  # fmt: skip
    assert beir_loaded.rows("select doc_id from raw.rankings") == [("a",)]


# --- (E) BEIR folders ----------------------------------------------------------------------------------------

CORPUS_LINES = [json.dumps(d) for d in CORPUS]
QUERY_LINES = [json.dumps(q) for q in QUERIES]
BAD_FOLDERS = [
    pytest.param(CORPUS_LINES, QUERY_LINES, HEADER + "q1\ta\t1\nq2\tgone\t1\n",
                 "test.tsv:3: doc 'gone' is not a document of corpus.jsonl", id="qrels doc not in corpus"),
    pytest.param(CORPUS_LINES, QUERY_LINES, HEADER + "q1\ta\t1\nq2\tb\t2\nq1O\tb\t1\n",
                 "test.tsv:4: question 'q1O' is not a question of queries.jsonl", id="qrels question not in queries"),
    pytest.param([CORPUS_LINES[0], '{"_id": 3, "title": "C", "text": "gamma"}'], QUERY_LINES, HEADER + BEIR_QRELS,
                 "corpus.jsonl:2: _id 3 must be a string", id="corpus numeric _id"),
    pytest.param(CORPUS_LINES, ['{"_id": 1, "text": "first?"}', QUERY_LINES[1]], HEADER + BEIR_QRELS,
                 "queries.jsonl:1: _id 1 must be a string", id="queries numeric _id"),
    pytest.param(CORPUS_LINES, QUERY_LINES, BEIR_QRELS,
                 "test.tsv:1: expected the header query-id, corpus-id, score (tab-separated), not 'q1\\ta\\t1'",
                 id="qrels without header"),
    pytest.param(CORPUS_LINES, QUERY_LINES, "foo bar baz\n" + BEIR_QRELS,
                 "test.tsv:1: expected the header query-id, corpus-id, score (tab-separated), not 'foo bar baz'",
                 id="qrels wrong header"),
    pytest.param([CORPUS_LINES[0], '{"_id": "b", "title": "B"}'], QUERY_LINES, HEADER + BEIR_QRELS,
                 "corpus.jsonl:2: doc 'b' has no text", id="corpus line without text"),
    pytest.param(['{"_id": "a", "title": "A", "text": null}', CORPUS_LINES[1]], QUERY_LINES, HEADER + BEIR_QRELS,
                 "corpus.jsonl:1: doc 'a' has no text", id="corpus null text"),
]  # fmt: skip


@pytest.mark.parametrize(("corpus", "queries", "qrels", "message"), BAD_FOLDERS)
@pytest.mark.parametrize("into", ["empty", "loaded"])
def test_bad_beir_folders_are_refused_and_nothing_changes(
    warehouse: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str], into: str, corpus: list[str],
    queries: list[str], qrels: str, message: str,
) -> None:  # fmt: skip
    if into == "loaded":  # over a collection already imported, with a run
        (tmp_path / "r1.txt").write_text("q1 Q0 a 1 2 t\n")
        assert import_(warehouse, "--collection", "sci", "--beir", str(good_beir(tmp_path / "sci")),
                       "--run", str(tmp_path / "r1.txt"), "--run-id", "r1") == 0  # fmt: skip
    folder = write_beir(tmp_path / "bad", corpus, queries, qrels)
    assert_refused(warehouse, capsys, ["--collection", "sci", "--beir", str(folder)], message)


# --- (F) what is accepted, and builds ---------------------------------------------------------------------------------


@pytest.mark.dbt
def test_what_the_door_takes_builds(lesson: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """After refusals (a Docent run of a doc the seeds lack, a BEIR folder without its qrels header, a bad
    setting), each leaving the raw tables and the serving copy as they were, the next good imports are taken: a
    run of documents nobody listed into a collection without a corpus (TREC qrels and a run), a BEIR
    collection's and Docent's runs of their own documents; then `import --build` passes every test of the
    build and publishes them all."""
    copy = lesson.copy(tmp_path / "lesson")
    publish(copy.db_path, copy.db_path.with_name("serving.duckdb"))
    before = warehouse_checksums(copy.db_path)
    assert "serving.duckdb" in before
    no_header = write_beir(tmp_path / "no-header", CORPUS_LINES, QUERY_LINES, BEIR_QRELS)
    assert_refused(copy, capsys, ["--collection", "sci", "--beir", str(no_header)], "test.tsv:1: ")
    assert copy.cli("build", "--vars", "{n_permutations: 0}").returncode == 2
    assert warehouse_checksums(copy.db_path) == before
    (tmp_path / "bad-docent.txt").write_text("rate_limit_status Q0 auth 1 2 t\nrate_limit_status Q0 nosuchdoc 2 1 t\n")
    assert_refused(copy, capsys, ["--collection", "docent", "--run", str(tmp_path / "bad-docent.txt"),
                                  "--run-id", "keyword_overlap"],
                   "bad-docent.txt:2: doc 'nosuchdoc' is not a document of collection 'docent'")  # fmt: skip
    (tmp_path / "qrels.txt").write_text("1 0 d1 1\n2 0 d2 1\n")
    (tmp_path / "trec-run.txt").write_text("1 Q0 d1 1 2 t\n1 Q0 never-listed 2 1 t\n2 Q0 other 1 1 t\n")
    assert import_(copy, "--collection", "trec_only", "--qrels", str(tmp_path / "qrels.txt"),
                   "--run", str(tmp_path / "trec-run.txt"), "--run-id", "r") == 0  # fmt: skip
    (tmp_path / "sci-run.txt").write_text("q1 Q0 a 1 2 t\nq2 Q0 b 1 1 t\n")
    assert import_(copy, "--collection", "sci", "--beir", str(good_beir(tmp_path / "sci")),
                   "--run", str(tmp_path / "sci-run.txt"), "--run-id", "r") == 0  # fmt: skip
    (tmp_path / "docent-run.txt").write_text("rate_limit_status Q0 ratelimits 1 2 t\nrate_limit_status Q0 auth 2 1 t\n")
    assert import_(copy, "--collection", "docent", "--run", str(tmp_path / "docent-run.txt"), "--run-id", "mine",
                   "--build") == 0  # fmt: skip
    assert copy.rows("select doc_id from raw.rankings where collection_id = 'trec_only' order by 1") == [
        ("d1",), ("never-listed",), ("other",)
    ]
    assert copy.rows("select count(*) from run_metrics where run_id in ('r', 'mine') and k = 1") == [(3,)]
    with duckdb.connect(str(copy.db_path.with_name("serving.duckdb")), read_only=True) as served:
        assert served.execute("select count(*) from run_metrics where run_id in ('r', 'mine') and k = 1"
                              ).fetchall() == [(3,)]  # fmt: skip


# --- (G) questions a collection does not have --------------------------------------------------------------------

QUESTION_TYPOS = [
    ("q1 Q0 a 1 2 t\nQ1 Q0 b 2 1 t\n", [], "run.txt:2: question 'Q1' is not a question of collection 'sci'"),
    # the careful read (tabs and spaces mixed) checks the same
    ("q1\tQ0 a 1 2 t\n\nq2 Q0 b 1 1 t\nq2x Q0 a 1 1 t\n", [], "run.txt:4: question 'q2x' is not a question of"),
    ("q1 Q0 a#0 1 2 t\nq3 Q0 b#1 1 1 t\n", ["--chunks"], "run.txt:2: question 'q3' is not a question of collection"),
]


@pytest.mark.parametrize(("content", "extra", "message"), QUESTION_TYPOS, ids=["one pass", "careful read", "chunks"])
def test_a_run_naming_a_question_the_collection_lacks_is_refused(
    beir_loaded: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, extra: list[str],
    message: str,
) -> None:  # fmt: skip
    path = tmp_path / "bad" / "run.txt"
    path.parent.mkdir()
    path.write_text(content)
    for run_id in ("r1", "r2"):  # replacing a run, or a new one
        assert_refused(beir_loaded, capsys, ["--collection", "sci", "--run", str(path), "--run-id", run_id, *extra],
                       message)  # fmt: skip


def test_a_run_imported_with_its_beir_folder_is_checked_against_its_questions(
    warehouse: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = good_beir(tmp_path / "sci")
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 2 t\nq01 Q0 a 1 2 t\n")
    args = ["--collection", "sci", "--beir", str(folder), "--run", str(tmp_path / "run.txt"), "--run-id", "r"]
    assert_refused(warehouse, capsys, args, "run.txt:2: question 'q01' is not a question of collection 'sci'")


def test_a_new_beir_folder_that_lacks_a_question_an_earlier_run_ranks_is_refused(
    beir_loaded: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run r1 ranks for q1; a folder whose split judges q2 only would leave it out of every measure."""
    other = write_beir(tmp_path / "other", CORPUS_LINES, QUERY_LINES, HEADER + "q2\tb\t1\n")
    message = "queries.jsonl: no question 'q1' judged in this split, which run 'r1' of collection 'sci' ranks"
    assert_refused(beir_loaded, capsys, ["--collection", "sci", "--beir", str(other)], message)


@pytest.mark.parametrize(
    ("qrels", "message"),
    [
        ("q1 0 a 1\nq1O 0 b 2\n", "qrels.txt:2: question 'q1O' is not a question of collection 'sci'"),
        ("q1 0 a 1\n# a comment\nq2 0 zz 2\n", "qrels.txt:3: doc 'zz' is not a document of collection 'sci'"),
    ],
    ids=["question", "doc"],
)
def test_trec_qrels_naming_a_question_or_doc_the_collection_lacks_are_refused(
    beir_loaded: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str], qrels: str, message: str
) -> None:
    """TREC qrels replace a collection's judgments, not its questions and documents: they must name those."""
    (tmp_path / "qrels.txt").write_text(qrels)
    assert_refused(beir_loaded, capsys, ["--collection", "sci", "--qrels", str(tmp_path / "qrels.txt")], message)


def test_a_docent_run_naming_a_question_the_seeds_lack_is_refused(
    warehouse: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "run.txt").write_text("rate_limit_status Q0 ratelimits 1 2 t\nrate_limit_stats Q0 auth 1 1 t\n")
    args = ["--collection", "docent", "--run", str(tmp_path / "run.txt"), "--run-id", "mine"]
    assert_refused(warehouse, capsys, args, "run.txt:2: question 'rate_limit_stats' is not a question of collection "
                   "'docent'")  # fmt: skip


@pytest.mark.parametrize("chunk_rule", [None, "maxp"])
def test_write_run_naming_a_question_the_collection_lacks_is_refused(
    beir_loaded: Warehouse, chunk_rule: str | None
) -> None:
    """rm.write_run names the question and the row; nothing is written."""
    before = warehouse_checksums(beir_loaded.db_path)
    doc = "b#0" if chunk_rule else "b"
    with pytest.raises(InputError) as refused:
        api.write_run("sci", "notebook", [("q1", "a" + doc[1:], 1.0), ("Q01", doc, 0.5)], chunk_rule=chunk_rule,
                      database=beir_loaded.db_path)  # fmt: skip
    assert str(refused.value) == f"question 'Q01' is not a question of collection 'sci' (the row 'Q01', '{doc}', 0.5)"
    assert warehouse_checksums(beir_loaded.db_path) == before
    with pytest.raises(InputError, match="question 'nope' is not a question of collection 'docent'"):
        api.write_run("docent", "mine", [("nope", "auth", 1.0)], database=beir_loaded.db_path)
    assert warehouse_checksums(beir_loaded.db_path) == before


def test_fusing_runs_with_a_question_the_collection_lacks_is_refused(
    beir_loaded: Warehouse, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run written before the collection's questions were checked (here: straight into the raw tables) cannot
    pass its unknown question on to a fused run."""
    with connect(beir_loaded.db_path) as con, transaction(con):
        con.execute("insert into raw.runs (collection_id, run_id, retriever, parameters, created_at, run_version) "
                    "values ('sci', 'old', 'old', '{}', timestamp '2026-01-01', 'v')")  # fmt: skip
        con.execute("insert into raw.rankings (collection_id, run_id, question_id, doc_id, rank, score) "
                    "values ('sci', 'old', 'q1', 'a', 1, 1.0), ('sci', 'old', 'q9', 'b', 1, 1.0)")  # fmt: skip
    before = warehouse_checksums(beir_loaded.db_path)
    code = main(["fuse", "--collection", "sci", "--runs", "r1,old", "--run-id", "fused", "--db",
                 str(beir_loaded.db_path)])  # fmt: skip
    assert code == 2
    assert one_error_line(capsys.readouterr().err, "fuse").startswith("question 'q9' is not a question of collection")
    assert warehouse_checksums(beir_loaded.db_path) == before


# --- (H) what else a new user mistypes -------------------------------------------------------------------------------

OTHER_MISTAKES = [
    (["rank", "--collection", "sciy", "--retriever", "bm25"], "rank",
     "collection 'sciy' has no documents: a collection gets them from its seeds (docent) or from `retrieval-metrics "
     "import --beir`; the warehouse's collections: docent, sci, trec_only"),
    (["settings", "--collection", "sciy", "--set", "k_values=10"], "settings",
     "collection 'sciy' has no judgments yet: import --qrels (or --beir) first; the warehouse's collections: "
     "docent, sci, trec_only"),
    (["remove", "--collection", "sciy", "--all", "--yes"], "remove",
     "the warehouse has no collection 'sciy'; the warehouse's collections: docent, sci, trec_only"),
    (["settings", "--collection", "trec_only", "--set", "tie_rule=doc_order"], "settings",
     "collection 'trec_only': setting tie_rule: doc_order needs the collection's documents, and it has none"),
    (["query", "select 1; select 2"], "query", "query runs one statement, not 2: run them one at a time"),
    (["query", "copy (select 1) to 'written.csv'"], "query", "query only reads: COPY is refused"),
    (["query", "export database 'exported'"], "query", "query only reads: EXPORT is refused"),
    (["query", "attach 'other.duckdb' as other"], "query", "query only reads: ATTACH is refused"),
    (["query", "install httpfs"], "query", "query only reads: LOAD is refused"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "command", "message"), OTHER_MISTAKES, ids=[" ".join(a[:2]) for a, _, _ in OTHER_MISTAKES])
def test_other_mistakes_are_refused_and_change_nothing(
    beir_loaded: Warehouse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    args: list[str], command: str, message: str,
) -> None:  # fmt: skip
    """An unknown collection's error lists the ones there are; doc_order needs documents; `query` runs one
    read-only statement (the warehouse file itself, read-only, as --db): nothing changes, no file is written."""
    (tmp_path / "trec_only.txt").write_text("1 0 a 1\n")
    assert import_(beir_loaded, "--collection", "trec_only", "--qrels", str(tmp_path / "trec_only.txt")) == 0
    monkeypatch.chdir(tmp_path)
    files = sorted(tmp_path.rglob("*"))
    before = warehouse_checksums(beir_loaded.db_path)
    capsys.readouterr()
    assert main([*args, "--db", str(beir_loaded.db_path)]) == 2
    assert one_error_line(capsys.readouterr().err, command).startswith(message)
    assert warehouse_checksums(beir_loaded.db_path) == before
    assert sorted(tmp_path.rglob("*")) == files
