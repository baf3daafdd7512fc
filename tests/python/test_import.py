"""`retrieval-metrics import`: TREC and BEIR files in, every bad file refused with nothing lost.

The command runs in-process (cli.main): no dbt, except the one test that builds the imported collection.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from conftest import Warehouse
from retrieval_metrics.cli import main
from retrieval_metrics.importing import CarefulReadNeeded, ImportRequest, write
from retrieval_metrics.warehouse import transaction

ERROR = "retrieval-metrics import: error: "


def import_trec(args: list[str]) -> int:
    """`retrieval-metrics import ARGS`, in-process."""
    return main(["import", *args])


QRELS = "1 0 d1 1\n1 0 d2 2\n1 0 d3 0\n07 0 d1 1\n"
RUN = "1 Q0 d3 9 1.0 tagA\n1\tQ0 d1 8 1.0 tagA\n1 Q0  d2 7 5e-1 tagA\n07 Q0 d5 1 3 tagA\n99 Q0 d1 1 1 tagA\n"


def dump(warehouse: Warehouse) -> list[tuple[object, ...]]:
    """Every raw table, in a fixed order: 'exactly as it was' is checked against this."""
    return warehouse.rows(
        """
        select 'runs', collection_id, run_id, retriever || parameters || cast(created_at as varchar), null from raw.runs
        union all select 'rankings', collection_id, run_id || '/' || question_id, doc_id, rank from raw.rankings
        union all select 'qrels', collection_id, question_id, doc_id, relevance from raw.qrels
        union all select 'questions', collection_id, question_id, question_text, null from raw.questions
        union all select 'documents', collection_id, doc_id, title || doc_text, null from raw.documents
        order by all
        """
    )


def load(warehouse: Warehouse, tmp_path: Path) -> Warehouse:
    """Import collection tiny into the warehouse: QRELS, and RUN as runs r1 and r2."""
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    db = ["--db", str(warehouse.db_path)]
    assert import_trec(["--collection", "tiny", "--qrels", str(tmp_path / "qrels.txt"), *db]) == 0
    assert import_trec(["--collection", "tiny", "--run", str(tmp_path / "run.txt"), "--run-id", "r1", *db]) == 0
    assert import_trec(["--collection", "tiny", "--run", str(tmp_path / "run.txt"), "--run-id", "r2", *db]) == 0
    return warehouse


@pytest.fixture
def loaded(warehouse: Warehouse, tmp_path: Path) -> Warehouse:
    return load(warehouse, tmp_path)


def test_run_is_ranked_as_trec_eval_ranks_it(loaded: Warehouse) -> None:
    rows = loaded.rows("select question_id, doc_id, rank from raw.rankings where run_id = 'r1' order by all")
    # score descending; the 1.0 tie between d3 and d1 goes to the larger docno; the rank column is ignored
    assert rows == [("07", "d5", 1), ("1", "d1", 2), ("1", "d2", 3), ("1", "d3", 1), ("99", "d1", 1)]
    assert loaded.rows("select retriever from raw.runs where run_id = 'r1'") == [("tagA",)]


def test_reimport_replaces_that_run_only(loaded: Warehouse, tmp_path: Path) -> None:
    r2_before = [row for row in dump(loaded) if "r2" in str(row[2])]
    (tmp_path / "shorter.txt").write_text("1 Q0 d2 1 9 new\n")
    assert import_trec(["--collection", "tiny", "--run", str(tmp_path / "shorter.txt"), "--run-id", "r1",
                        "--db", str(loaded.db_path)]) == 0
    assert loaded.rows("select question_id, doc_id, rank from raw.rankings where run_id = 'r1'") == [("1", "d2", 1)]
    assert [row for row in dump(loaded) if "r2" in str(row[2])] == r2_before


@pytest.mark.dbt
def test_imported_collection_builds_and_warns_about_unknown_questions(lesson: Warehouse, tmp_path: Path) -> None:
    loaded = load(lesson.copy(tmp_path / "lesson"), tmp_path)  # beside the lesson's keyword_overlap run
    result = loaded.build()
    statuses = {r.node.name: str(r.status) for r in result.result}
    assert statuses["assert_run_questions_are_known"] == "warn"  # question 99 is in the run, not the qrels
    assert loaded.rows("select * from dbt_test__audit.assert_run_questions_are_known order by all") == [
        ("tiny", "r1", "99"), ("tiny", "r2", "99")
    ]
    rows = loaded.rows("select question_id, k, ndcg from question_metrics where run_id = 'r1' and k = 2 order by 1")
    assert [row[0] for row in rows] == ["07", "1"]  # "99" is ignored; "07" counts 0 (its relevant doc missing)
    assert loaded.rows("select n_questions from run_metrics where run_id = 'r1' and k = 1") == [(2,)]


ONE_PASS = [("07", "d1", 1), ("1", "d1", 1), ("1", "d2", 2)]


@pytest.mark.parametrize(
    ("content", "ranks"),
    [
        ("1 Q0 d2 1 5e-1 t\n1 Q0 d1 2 1.0 t\n07 Q0 d1 1 -3 t\n", ONE_PASS),
        ("1\tQ0\td1\t1\t1.0\tt\n1\tQ0\td2\t2\t0.5\tt\n07\tQ0\td1\t1\t-3\tt\n", ONE_PASS),
        (RUN, None),  # tabs and runs of spaces mixed: re-split line by line
        ("1 Q0 d1 1 1 t\n1 Q0 d2 2 inf t\n", None),
        ("1 Q0 d1 1 1 t\n1 Q0 d1 2 0 t\n", None),  # a duplicate
        ("1 Q0 d1 1 1 t\n1 Q0 d2 2\n", None),
    ],
)
def test_one_pass_read_takes_clean_runs_and_leaves_the_rest_to_the_careful_read(
    loaded: Warehouse, tmp_path: Path, content: str, ranks: list[tuple[str, str, int]] | None
) -> None:
    """The careful read names the line at fault (see the tests below); the one-pass read has to rank clean
    files as trec_eval does, and hand every other file over with nothing written (ranks None)."""
    path = tmp_path / "run.txt"
    path.write_text(content)
    with duckdb.connect(str(loaded.db_path)) as con:
        try:
            with transaction(con):
                write(con, ImportRequest("tiny", run=path, run_id="r9"))  # the one-pass read
        except CarefulReadNeeded:
            assert ranks is None
    written = loaded.rows("select question_id, doc_id, rank from raw.rankings where run_id = 'r9' order by all")
    assert written == (ranks or [])


BAD_RUNS = [
    ("1 Q0 d1 1 1.0\n", "run.txt:1: expected 6 fields"),
    ("1 Q0 d1 1 1.0 t\n1 Q0 d2 2 0.5 t extra\n", "run.txt:2: expected 6 fields"),
    ("1 Q0 d1 1 1.0 t\n1 Q0 d2 2 high t\n", "run.txt:2: score 'high' is not a finite number"),
    ("1 Q0 d1 1 nan t\n", "run.txt:1: score 'nan' is not a finite number"),
    ("1 Q0 d1 1 1 t\n1 Q0 d2 2 1 t\n1 Q0 d1 3 0 t\n", "run.txt:3: duplicate document in run for question '1', doc 'd1'"),
    ("", "run.txt: empty file"),
    ("\n  \n", "run.txt: empty file"),
]


@pytest.mark.parametrize(("content", "message"), BAD_RUNS)
def test_bad_run_files_are_refused_and_nothing_changes(
    loaded: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    before = dump(loaded)
    (tmp_path / "bad").mkdir()
    path = tmp_path / "bad" / "run.txt"
    path.write_text(content)
    code = import_trec(["--collection", "tiny", "--run", str(path), "--run-id", "r1", "--db", str(loaded.db_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith(ERROR) and message in err, err
    assert dump(loaded) == before


BAD_QRELS = [
    ("1 0 d1\n", "qrels.txt:1: expected 4 fields"),
    ("1 0 d1 1\n1 0 d2 high\n", "qrels.txt:2: relevance 'high' is not an integer"),
    ("1 0 d1 1.5\n", "qrels.txt:1: relevance '1.5' is not an integer"),
    ("1 0 d1 1\n2 0 d1 1\n1 0 d1 2\n", "qrels.txt:3: duplicate judgment for question '1', doc 'd1'"),
    ("", "qrels.txt: empty file"),
]


@pytest.mark.parametrize(("content", "message"), BAD_QRELS)
def test_bad_qrels_files_are_refused_and_nothing_changes(
    loaded: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    before = dump(loaded)
    (tmp_path / "bad").mkdir()
    path = tmp_path / "bad" / "qrels.txt"
    path.write_text(content)
    code = import_trec(["--collection", "tiny", "--qrels", str(path), "--db", str(loaded.db_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith(ERROR) and message in err, err
    assert dump(loaded) == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--collection", "", "--qrels", "q"], "collection '' is not a plain identifier"),
        (["--collection", "my collection", "--qrels", "q"], "collection 'my collection' is not a plain identifier"),
        (["--collection", "tiny", "--run", "r", "--run-id", "a/b"], "run id 'a/b' is not a plain identifier"),
        (["--collection", "tiny", "--run", "r", "--run-id", ""], "run id '' is not a plain identifier"),
        (["--collection", "tiny", "--run", "r"], "--run and --run-id go together"),
        (["--collection", "docent", "--qrels", "q"], "collection 'docent' is the lesson's seeds"),
        (["--collection", "unknown", "--run", "RUN", "--run-id", "x"], "collection 'unknown' has no judgments yet"),
        (["--collection", "tiny", "--run", "missing.txt", "--run-id", "x"], "missing.txt: no such file"),
        (["--collection", "tiny"], "nothing to import"),
    ],
)
def test_bad_arguments_are_refused_and_nothing_changes(
    loaded: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    (tmp_path / "run_ok.txt").write_text(RUN)
    args = [str(tmp_path / "run_ok.txt") if a == "RUN" else a for a in args]
    before = dump(loaded)
    code = import_trec([*args, "--db", str(loaded.db_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith(ERROR) and message in err, err
    assert dump(loaded) == before


def write_beir(folder: Path, corpus: list[dict[str, object]], queries: list[dict[str, object]], qrels: str) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus))
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + qrels)
    return folder


def test_beir_folder_imports_docs_judged_queries_and_qrels(warehouse: Warehouse, tmp_path: Path) -> None:
    folder = write_beir(
        tmp_path / "scifact",
        corpus=[{"_id": "4983", "title": "T1", "text": "x", "metadata": {}}, {"_id": "0004983", "title": "", "text": "y"}],
        queries=[{"_id": "1", "text": "first?"}, {"_id": "2", "text": "not judged in test"}],
        qrels="1\t4983\t1\n1\t0004983\t0\n",
    )
    assert import_trec(["--collection", "scifact", "--beir", str(folder), "--db", str(warehouse.db_path)]) == 0
    assert warehouse.rows("select doc_id from raw.documents order by 1") == [("0004983",), ("4983",)]
    assert warehouse.rows("select question_id, question_text from raw.questions") == [("1", "first?")]
    assert warehouse.rows("select question_id, doc_id, relevance from raw.qrels order by 2") == [
        ("1", "0004983", 0), ("1", "4983", 1)
    ]


@pytest.mark.parametrize(
    ("corpus", "qrels", "message"),
    [
        ([{"_id": "a", "text": "x"}, {"_id": "a", "text": "y"}], "1\ta\t1\n", "corpus.jsonl:2: duplicate _id 'a'"),
        ([{"_id": "a", "text": "x"}], "1\ta\tgood\n", "score 'good' is not an integer"),
    ],
)
def test_bad_beir_folders_are_refused(
    warehouse: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str], corpus, qrels: str, message: str
) -> None:
    folder = write_beir(tmp_path / "beir", corpus=corpus, queries=[{"_id": "1", "text": "q"}], qrels=qrels)
    code = import_trec(["--collection", "beir", "--beir", str(folder), "--db", str(warehouse.db_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(ERROR) and message in err, err
    assert warehouse.rows("select count(*) from information_schema.tables where table_schema = 'raw'") == [(0,)]
