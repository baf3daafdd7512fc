"""The import's door checks (issue 28, item 1): nothing an import accepts can make a later build fail.

Each file that a later `dbt build` would fail on (a run ranking a doc its collection's corpus lacks, BEIR qrels
judging a doc the corpus lacks, an `_id` that is not a string, a qrels file without its header, a document
without text) is refused with one line naming the file and line, exit 2, and the raw tables are left as they
were. A collection without a corpus (TREC qrels and runs) still takes runs of documents nobody listed, as the
build's test does. The commands run in-process (cli.main), except where a test builds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Warehouse
from retrieval_metrics import api
from retrieval_metrics.cli import main
from retrieval_metrics.warehouse import InputError

ERROR = "retrieval-metrics import: error: "
RAW_TABLES = ("runs", "rankings", "qrels", "documents", "questions")
CORPUS = [{"_id": "a", "title": "A", "text": "alpha"}, {"_id": "b", "title": "B", "text": "beta"}]
QUERIES = [{"_id": "q1", "text": "first?"}, {"_id": "q2", "text": "second?"}]
QRELS = "q1\ta\t1\nq2\tb\t2\n"
HEADER = "query-id\tcorpus-id\tscore\n"


def raw_rows(warehouse: Warehouse) -> dict[str, list[tuple[object, ...]]]:
    """Every row of the raw tables the import writes (none for a table not created yet)."""
    if not warehouse.db_path.exists():
        return {}
    present = {row[0] for row in warehouse.rows("select table_name from information_schema.tables "
                                                 "where table_schema = 'raw'")}  # fmt: skip
    return {t: warehouse.rows(f"select * from raw.{t} order by all") for t in RAW_TABLES if t in present}


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
    return write_beir(folder, [json.dumps(d) for d in CORPUS], [json.dumps(q) for q in QUERIES], HEADER + QRELS)


def assert_refused(
    warehouse: Warehouse, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    """The import refuses with exit 2 and one line `ERROR...message...`, and leaves every raw table as it was."""
    before = raw_rows(warehouse)
    code = import_(warehouse, *args)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith(ERROR) and message in err, err
    assert raw_rows(warehouse) == before


@pytest.fixture
def beir_loaded(warehouse: Warehouse, tmp_path: Path) -> Warehouse:
    """Collection `sci`, imported from a BEIR folder (a corpus of docs a and b), with run r1."""
    (tmp_path / "r1.txt").write_text("q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t\n")
    folder = good_beir(tmp_path / "sci")
    assert import_(warehouse, "--collection", "sci", "--beir", str(folder), "--run", str(tmp_path / "r1.txt"),
                   "--run-id", "r1") == 0  # fmt: skip
    return warehouse


# --- (a) runs against a collection's corpus ---------------------------------------------------------------------

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
    assert raw_rows(warehouse).get("runs", []) == []


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


# --- (b)-(e) BEIR folders ----------------------------------------------------------------------------------------

CORPUS_LINES = [json.dumps(d) for d in CORPUS]
QUERY_LINES = [json.dumps(q) for q in QUERIES]
BAD_FOLDERS = [
    pytest.param(CORPUS_LINES, QUERY_LINES, HEADER + "q1\ta\t1\nq2\tgone\t1\n",
                 "test.tsv:3: doc 'gone' is not a document of corpus.jsonl", id="qrels doc not in corpus"),
    pytest.param([CORPUS_LINES[0], '{"_id": 3, "title": "C", "text": "gamma"}'], QUERY_LINES, HEADER + QRELS,
                 "corpus.jsonl:2: _id 3 must be a string", id="corpus numeric _id"),
    pytest.param(CORPUS_LINES, ['{"_id": 1, "text": "first?"}', QUERY_LINES[1]], HEADER + QRELS,
                 "queries.jsonl:1: _id 1 must be a string", id="queries numeric _id"),
    pytest.param(CORPUS_LINES, QUERY_LINES, QRELS,
                 "test.tsv:1: expected the header query-id, corpus-id, score (tab-separated), not 'q1\\ta\\t1'",
                 id="qrels without header"),
    pytest.param(CORPUS_LINES, QUERY_LINES, "foo bar baz\n" + QRELS,
                 "test.tsv:1: expected the header query-id, corpus-id, score (tab-separated), not 'foo bar baz'",
                 id="qrels wrong header"),
    pytest.param([CORPUS_LINES[0], '{"_id": "b", "title": "B"}'], QUERY_LINES, HEADER + QRELS,
                 "corpus.jsonl:2: doc 'b' has no text", id="corpus line without text"),
    pytest.param(['{"_id": "a", "title": "A", "text": null}', CORPUS_LINES[1]], QUERY_LINES, HEADER + QRELS,
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


# --- what is accepted, and builds ---------------------------------------------------------------------------------


@pytest.mark.dbt
def test_what_the_door_takes_builds(lesson: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A run of documents nobody listed, into a collection without a corpus (TREC qrels and a run), is taken,
    and so are a BEIR collection's and Docent's runs of their own documents: the build's tests all pass. A
    Docent run of a doc the seeds lack is refused in the built warehouse too."""
    copy = lesson.copy(tmp_path / "lesson")
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
    assert import_(copy, "--collection", "docent", "--run", str(tmp_path / "docent-run.txt"), "--run-id", "mine") == 0
    copy.build()
    assert copy.rows("select doc_id from raw.rankings where collection_id = 'trec_only' order by 1") == [
        ("d1",), ("never-listed",), ("other",)
    ]
    assert copy.rows("select count(*) from run_metrics where run_id in ('r', 'mine') and k = 1") == [(3,)]
