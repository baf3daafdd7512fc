"""`retrieval-metrics import`: TREC and BEIR files in, every bad file refused with nothing lost.

The command runs in-process (cli.main): no dbt, except the one test that builds the imported collection.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
import pytrec_eval

from conftest import REPO_ROOT, Warehouse
from retrieval_metrics import api, trec
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


def test_a_chunk_run_file_ranks_its_documents_by_their_best_chunk(loaded: Warehouse, tmp_path: Path) -> None:
    (tmp_path / "chunks.txt").write_text("1 Q0 d1#0 1 0.5 c\n1 Q0 d1#1 2 2.5 c\n1 Q0 d2#0 3 1.5 c\n07 Q0 d5#2 1 3 c\n")
    db = ["--db", str(loaded.db_path)]
    assert import_trec(["--collection", "tiny", "--run", str(tmp_path / "chunks.txt"), "--run-id", "c", "--chunks",
                        *db]) == 0  # fmt: skip
    assert loaded.rows("select question_id, doc_id, rank, score from raw.rankings where run_id = 'c' order by all") == [
        ("07", "d5", 1, 3.0), ("1", "d1", 1, 2.5), ("1", "d2", 2, 1.5)]
    assert loaded.rows("select chunk_id, rank from raw.chunk_rankings where run_id = 'c' and question_id = '1' "
                       "order by rank") == [("d1#1", 1), ("d2#0", 2), ("d1#0", 3)]  # fmt: skip
    assert json.loads(loaded.rows("select parameters from raw.runs where run_id = 'c'")[0][0])["chunk_rule"] == "maxp"
    (tmp_path / "plain.txt").write_text("1 Q0 d1 1 0.5 c\n")
    assert import_trec(["--collection", "tiny", "--run", str(tmp_path / "plain.txt"), "--run-id", "c", "--chunks",
                        *db]) == 2  # fmt: skip
    assert loaded.rows("select count(*) from raw.chunk_rankings where run_id = 'c'") == [(4,)]  # nothing lost


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
    rows = loaded.rows("select question_id, k, ndcg from question_metrics where run_id = 'r1' and k = 3 order by 1")
    assert [row[0] for row in rows] == ["07", "1"]  # "99" is ignored; "07" counts 0 (its relevant doc missing)
    assert loaded.rows("select n_questions from run_metrics where run_id = 'r1' and k = 1") == [(2,)]


@pytest.mark.dbt
def test_a_builds_warnings_reach_the_commands_own_lines(
    lesson: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """import --build and rm.build() print each data test that warned on a line of their own (dbt's own lines go
    to its log), and count them in their summary; the import says itself what the build will warn about."""
    copy = lesson.copy(tmp_path / "lesson")
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    files = ["--qrels", str(tmp_path / "qrels.txt"), "--run", str(tmp_path / "run.txt"), "--run-id", "r1"]
    assert import_trec(["--collection", "tiny", *files, "--build", "--db", str(copy.db_path)]) == 0
    out, err = capsys.readouterr()
    assert err.splitlines()[-2:] == [
        "retrieval-metrics import: run r1: 1 question has no judgments in collection tiny: not measured (trec_eval "
        "does the same)",
        "retrieval-metrics import: warning: assert_run_questions_are_known: Got 1 result, configured to warn if != 0; "
        "first: collection_id='tiny', run_id='r1', question_id='99'",
    ]  # fmt: skip
    assert out.rstrip().endswith("; 1 warning (above)"), out
    api.write_run("tiny", "r2", [("1", "d1", 1.0), ("98", "d1", 1.0), ("99", "d2", 1.0)], database=copy.db_path)
    line = api.build(database=copy.db_path)
    assert line.endswith("; 1 warning (above)")
    assert capsys.readouterr().err.splitlines()[-1] == (
        "retrieval_metrics.build: warning: assert_run_questions_are_known: Got 2 results, configured to warn if != 0; "
        "first: collection_id='tiny', run_id='r2', question_id='98'; collection_id='tiny', run_id='r2', "
        "question_id='99'"
    )  # fmt: skip


def test_a_trec_only_collection_says_how_many_questions_of_a_run_have_no_judgments(
    warehouse: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without questions of its own, a collection measures the questions its judgments name, as trec_eval does:
    a run's other questions are taken, and counted on a line of their own."""
    db = ["--db", str(warehouse.db_path)]
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN + "98 Q0 d1 1 1 tagA\n")
    assert import_trec(["--collection", "tiny", "--qrels", str(tmp_path / "qrels.txt"), *db]) == 0
    assert import_trec(["--collection", "tiny", "--run", str(tmp_path / "run.txt"), "--run-id", "r", *db]) == 0
    assert capsys.readouterr().err == ("retrieval-metrics import: run r: 2 questions have no judgments in collection "
                                       "tiny: not measured (trec_eval does the same)\n")  # fmt: skip
    assert warehouse.rows("select count(*) from raw.rankings where question_id in ('98', '99')") == [(2,)]
    (tmp_path / "judged.txt").write_text("1 Q0 d1 1 1 tagA\n07 Q0 d1 1 1 tagA\n")
    assert import_trec(["--collection", "tiny", "--run", str(tmp_path / "judged.txt"), "--run-id", "j", *db]) == 0
    assert capsys.readouterr().err == ""


def test_replacing_a_collections_judgments_says_what_it_replaces(
    warehouse: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """TREC qrels over a BEIR collection replace its judgments, not its questions and documents: the line says
    what the judgments were and how many questions are left without one."""
    folder = write_beir(
        tmp_path / "sci",
        corpus=[{"_id": "a", "title": "A", "text": "alpha"}, {"_id": "b", "title": "B", "text": "beta"}],
        queries=[{"_id": "q1", "text": "first?"}, {"_id": "q2", "text": "second?"}, {"_id": "q3", "text": "third?"}],
        qrels="q1\ta\t1\nq2\tb\t2\nq2\ta\t0\nq3\tb\t1\n",
    )
    db = ["--db", str(warehouse.db_path)]
    assert import_trec(["--collection", "sci", "--beir", str(folder), *db]) == 0
    out = capsys.readouterr().out
    assert out == "retrieval-metrics import: collection sci: 4 judgments for 3 questions; 2 documents\n"
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq2 0 a 1\n")
    assert import_trec(["--collection", "sci", "--qrels", str(tmp_path / "qrels.txt"), *db]) == 0
    assert capsys.readouterr().out == (
        "retrieval-metrics import: collection sci: 2 judgments for 2 questions, replacing 4 judgments for 3 questions "
        "(1 of its 3 questions has no judgment now: each scores 0 until judged)\n"
    )  # fmt: skip
    assert warehouse.rows("select count(*) from raw.questions") == [(3,)]
    assert warehouse.rows("select count(*) from raw.documents") == [(2,)]
    assert import_trec(["--collection", "sci", "--beir", str(folder), *db]) == 0
    assert capsys.readouterr().out == ("retrieval-metrics import: collection sci: 4 judgments for 3 questions, "
                                       "replacing 2 judgments for 2 questions; 2 documents\n")  # fmt: skip


SWAPPED = [
    ("1 Q0 d1 0.93 1 t\n1 Q0 d2 0.71 2 t\n1 Q0 d3 0.52 3 t\n07 Q0 d1 0.8 1 t\n07 Q0 d2 0.4 2 t\n",
     "the rank field (4th) is not a whole number ('0.93') and the scores (5th field) grow down each question's lines"),
    ("1 Q0 d1 1 1 t\n1 Q0 d2 2 2 t\n1 Q0 d3 3 3 t\n", "the scores (5th field) grow down each question's lines"),
    ("1 Q0 d1 1.5 9 t\n1 Q0 d2 2 8 t\n", "the rank field (4th) is not a whole number ('1.5')"),
    ("1 Q0 d1 1 9 t\n1 Q0 d2 2 8 t\n07 Q0 d2 1 1 t\n07 Q0 d1 2 1 t\n", None),  # a tie: the scores do not grow
    ("1 Q0 d1 1 1 t\n1 Q0 d2 2 3 t\n1 Q0 d3 3 2 t\n", None),  # out of order, but not growing down
]  # fmt: skip


@pytest.mark.parametrize(("content", "hint"), SWAPPED)
def test_a_run_whose_rank_and_score_look_swapped_is_imported_with_a_hint(
    loaded: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, hint: str | None
) -> None:
    """The import ranks by the 5th field as trec_eval does whatever the file looks like, and says in one line when
    its rank field is not a whole number or its scores grow down each question's lines."""
    capsys.readouterr()
    path = tmp_path / "swapped.txt"
    path.write_text(content)
    assert import_trec(["--collection", "tiny", "--run", str(path), "--run-id", "s", "--db", str(loaded.db_path)]) == 0
    err = capsys.readouterr().err
    if hint is None:
        assert err == ""
    else:
        assert err == (f"retrieval-metrics import: run s: hint: {hint}: are the rank and score columns swapped? "
                       "Imported as trec_eval reads it (the 5th field is the score, the highest ranked first)\n")
    lines = [line.split() for line in content.splitlines()]
    expected = {(q, d, float(score)) for q, _, d, _, score, _ in lines}
    assert set(loaded.rows("select question_id, doc_id, score from raw.rankings where run_id = 's'")) == expected
    ranked = loaded.rows("select doc_id from raw.rankings where run_id = 's' and question_id = '1' order by rank")
    by_score = sorted(((float(score), d) for q, _, d, _, score, _ in lines if q == "1"), reverse=True)
    assert [row[0] for row in ranked] == [d for _, d in by_score]  # score descending, then doc id descending


ONE_PASS = [("07", "d1", 1), ("1", "d1", 1), ("1", "d2", 2)]


@pytest.mark.parametrize(
    ("content", "ranks"),
    [
        ("1 Q0 d2 1 5e-1 t\n1 Q0 d1 2 1.0 t\n07 Q0 d1 1 -3 t\n", ONE_PASS),
        ("1\tQ0\td1\t1\t1.0\tt\n1\tQ0\td2\t2\t0.5\tt\n07\tQ0\td1\t1\t-3\tt\n", ONE_PASS),
        ("1 Q0 d2 1 5e-1 t\n1 Q0 d1 2 1.0 t x\n07 Q0 d1 1 -3 t two more\n", ONE_PASS),  # text after the tag
        ("1 Q0 d1 1 1 t\n1 Q0 d2 2 inf t\n", [("1", "d1", 2), ("1", "d2", 1)]),  # trec_eval's atof reads "inf"
        (RUN, None),  # tabs and runs of spaces mixed: re-split line by line
        ("1 Q0 d1 1 1 t\n1 Q0 d2\tx 2 0 t\n", None),  # a tab inside a field, past the first line
        ("1\tQ0\td1\t1\t1\tt\n1\tQ0\td2 x\t2\t0\tt\n", None),  # a space inside a field of a tab-separated file
        ("1 Q0 d1 1 1 t \n", None),  # a blank after the tag: nothing after it, or more text after more blanks?
        ("1 Q0 d1 1 nan t\n", None),
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
    ("1 Q0 d1 1 1.0 t extra\n1 Q0 d2 2 0.5\n", "run.txt:2: expected 6 fields"),
    ("1 Q0 d1 1 1.0 t\n1 Q0 d2 2 high t\n1 Q0 d3 3 nan t\n", "run.txt:2: score 'high' is not a number"),
    ("1 Q0 d1 1 nan t\n", "run.txt:1: score 'nan' is not a number"),
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


# ---------------------------------------------------------------------------------------------------------------
# File conformance: what trec_eval takes is imported as trec_eval reads it, what it refuses is refused with one
# line naming the file and line, and no file ends in a traceback.


def write_run(path: Path, lines: list[str], careful: bool) -> Path:
    """A run file; `careful`: its first line's blanks made tabs (the rest has spaces), which only the careful read
    takes."""
    first = lines[0].replace(" ", "\t") if careful else lines[0]
    path.write_text("".join(line + "\n" for line in [first, *lines[1:]]))
    return path


@pytest.mark.parametrize("careful", [False, True], ids=["one pass", "careful read"])
def test_text_after_the_sixth_field_is_ignored_and_counted(
    loaded: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str], careful_reads: list[Path], careful: bool
) -> None:
    # 5000 lines (DuckDB reads 2048 to a vector), every third with text after the tag, the first one among them
    lines = [f"q{i % 7} Q0 d{i} {i} {i % 13 / 4} tagB" for i in range(5000)]
    noted = [line + (" note: 2 more words" if i % 3 == 0 else "") for i, line in enumerate(lines)]
    db = ["--db", str(loaded.db_path)]
    for run_id, run_lines in [("plain", lines), ("noted", noted)]:
        path = write_run(tmp_path / f"{run_id}.txt", run_lines, careful)
        assert import_trec(["--collection", "tiny", "--run", str(path), "--run-id", run_id, *db]) == 0
    assert len(careful_reads) == (2 if careful else 0)
    assert capsys.readouterr().out.splitlines() == [
        "retrieval-metrics import: collection tiny: run plain: 5000 ranked docs",
        "retrieval-metrics import: collection tiny: run noted: 5000 ranked docs "
        "(1667 lines carried text after the 6th field, ignored as trec_eval does)",
    ]
    ranked = "select question_id, doc_id, rank, score from raw.rankings where run_id = ? order by all"
    assert loaded.rows(ranked, ["noted"]) == loaded.rows(ranked, ["plain"])
    assert loaded.rows("select retriever from raw.runs where run_id = 'noted'") == [("tagB",)]  # the 6th field


@pytest.mark.parametrize("first", [trec.EXTRA_TEXT_SAMPLE, trec.EXTRA_TEXT_SAMPLE + 1], ids=["seen first", "past that"])
def test_text_after_the_sixth_field_is_counted_wherever_it_starts(
    loaded: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str], careful_reads: list[Path], first: int
) -> None:
    """The one pass counts such lines if one of the file's first lines has some (counting reads on one thread);
    if not, it hands the file to the careful read, which counts them: the same rows and count either way."""
    lines = [f"q{i % 7} Q0 d{i} {i} {i % 13 / 4} tagB" for i in range(first + 100)]
    # from line `first` on, every third line
    noted = [line + (" note" if i >= first - 1 and (i - first + 1) % 3 == 0 else "") for i, line in enumerate(lines)]
    db = ["--db", str(loaded.db_path)]
    for run_id, run_lines in [("plain", lines), ("noted", noted)]:
        path = write_run(tmp_path / f"{run_id}.txt", run_lines, careful=False)
        assert import_trec(["--collection", "tiny", "--run", str(path), "--run-id", run_id, *db]) == 0
    assert careful_reads == ([] if first <= trec.EXTRA_TEXT_SAMPLE else [tmp_path / "noted.txt"])
    assert capsys.readouterr().out.splitlines()[1] == (
        f"retrieval-metrics import: collection tiny: run noted: {len(lines)} ranked docs "
        "(34 lines carried text after the 6th field, ignored as trec_eval does)"
    )
    ranked = "select question_id, doc_id, rank, score from raw.rankings where run_id = ? order by all"
    assert loaded.rows(ranked, ["noted"]) == loaded.rows(ranked, ["plain"])


def test_negative_grades_are_kept_as_written(warehouse: Warehouse, tmp_path: Path) -> None:
    # to trec_eval a negative grade is a doc in the pool but not judged: never relevant, left out by -J and
    # bpref (test_trec_agreement pins that); the measures read it from the grade, kept as written
    (tmp_path / "qrels.txt").write_text("1 0 a -1\n1 0 b -2\n1 0 c 1\n1 0 d -0\n1 0 e +2\n1 0 f -2147483648\n")
    qrels = ["--qrels", str(tmp_path / "qrels.txt")]
    assert import_trec(["--collection", "neg", *qrels, "--db", str(warehouse.db_path)]) == 0
    assert warehouse.rows("select doc_id, relevance from raw.qrels order by doc_id") == [
        ("a", -1), ("b", -2), ("c", 1), ("d", 0), ("e", 2), ("f", -(2**31))
    ]


def trec_eval_ranks(scores: dict[str, float]) -> dict[str, int]:
    """Each doc's rank in trec_eval's ranking of one question's scores: pytrec_eval's recip_rank when that doc
    alone is relevant."""
    values = pytrec_eval.RelevanceEvaluator({doc: {doc: 1} for doc in scores}, {"recip_rank"}).evaluate(
        {doc: scores for doc in scores}
    )
    return {doc: round(1 / values[doc]["recip_rank"]) for doc in scores}


BEYOND_FLOAT = {  # doc -> its score as written
    # no 32-bit float holds these: trec_eval ranks them all as +infinity, tied, docno descending
    "rel": "3e39", "zzz": "1e39", "big": "1e400", "inf": "inf", "over": "3.4028236e38",
    "half": "3.4028235677973366e38",  # float max + half its last step: rounded to even, that is up: infinity
    # these round to the float max, and tie
    "max": "3.4028235e38", "max2": "3.40282356e38", "below_half": "3.4028235677973362e38",
    "one": "1",
    "tiny": "1e-40",  # a float (subnormal), above 0
    "zero": "0", "minus_zero": "-0", "under": "1e-50", "under2": "1e-400",  # all 0 as floats, tied
    "low": "-3.4028235e38",
    "neg": "-1e39", "neg2": "-Infinity", "neg3": "-1e400",  # -infinity, tied
}  # fmt: skip


@pytest.mark.parametrize("careful", [False, True], ids=["one pass", "careful read"])
def test_scores_beyond_float_range_are_ranked_as_infinity_as_trec_eval_ranks_them(
    loaded: Warehouse, tmp_path: Path, careful_reads: list[Path], careful: bool
) -> None:
    path = write_run(tmp_path / "run.txt", [f"1 Q0 {doc} 1 {score} t" for doc, score in BEYOND_FLOAT.items()], careful)
    run = ["--run", str(path), "--run-id", "far"]
    assert import_trec(["--collection", "tiny", *run, "--db", str(loaded.db_path)]) == 0
    assert len(careful_reads) == careful
    rows = loaded.rows("select doc_id, rank, score from raw.rankings where run_id = 'far'")
    ours = {doc: rank for doc, rank, _ in rows}
    atof = {doc: float(score) for doc, score in BEYOND_FLOAT.items()}  # Python's float() reads as C's atof does
    assert ours == trec_eval_ranks(atof)
    # the case: "rel" (3e39) and "zzz" (1e39) tie at infinity (with 4 more), and "zzz" goes first
    assert ours["zzz"] == 1 and ours["rel"] == 2
    assert pytrec_eval.RelevanceEvaluator({"1": {"rel": 1}}, {"P.1"}).evaluate({"1": atof})["1"]["P_1"] == 0
    # the score kept is the double read (trec_eval 10.0's; trec_eval_version 9 ranks it as a 32-bit float)
    assert {doc: score for doc, _, score in rows} == atof


NASTY_RUN_LINES = [  # the second line of a run after "1 Q0 a 1 1 t": None if it is imported, else the error
    ("1 Q0 b 2 inf t", None),  # atof reads infinity
    ("1 Q0 b 2 -Infinity t", None),
    ("1 Q0 b 2 1e400 t", None),  # beyond a double too: atof reads infinity
    ("1 Q0 b 2 -1e400 t", None),
    ("1 Q0 b 2 1e-400 t", None),  # below a double's least: atof reads 0
    ("1 Q0 b 2 +.5E-3 t", None),
    ("\t1 Q0 b 2 1 t\t", None),  # blanks around the line
    ("1\tQ0 b  2\t1   t  # a comment", None),  # blanks mixed, text after the tag
    ("1 Q0 b 2 1 t\r", None),  # a CRLF line end
    ("1 Q0 b 2 NaN t", "score 'NaN' is not a number"),  # atof reads NaN, which trec_eval's sort has no place for
    ("1 Q0 b 2 -nan t", "score '-nan' is not a number"),
    ("1 Q0 b 2 infinite t", "score 'infinite' is not a number"),  # atof reads "inf" and drops the rest
    ("1 Q0 b 2 high t", "score 'high' is not a number"),  # atof reads 0
    ("1 Q0 b 2 1.5x t", "score '1.5x' is not a number"),  # atof reads 1.5
    ("1 Q0 b 2 0x10 t", "score '0x10' is not a number"),  # atof reads 16
    ("1 Q0 b 2 1_000 t", "score '1_000' is not a number"),  # atof reads 1, DuckDB alone 1000
    ("1 Q0 b 2 +-1 t", "score '+-1' is not a number"),  # atof reads 0, DuckDB alone -1
    ("1 Q0 b 2 1e t", "score '1e' is not a number"),
    ("1 Q0 b 2 . t", "score '.' is not a number"),
    ("1 Q0 b 2 \u0663 t", "score '\u0663' is not a number"),  # a digit, but not an ASCII one
    ("1 Q0 b 2 1.0", "expected 6 fields"),  # trec_eval: "Malformed line"
    ("1 Q0 b 2 1.0 ", "expected 6 fields"),  # nor is a blank a tag
    ("1 Q0 b", "expected 6 fields"),
    ("1 Q0 a 2 0 t", "duplicate document in run for question '1', doc 'a'"),
    ("1 Q0 b\udc80 2 1 t", "not UTF-8 text"),  # (a lone byte 0x80)
    ("1 Q0 b 2\r1 t", "expected 6 fields"),  # DuckDB and Python break the line there (trec_eval: a blank)
    ("1 Q0 b 2 1 t\x1fx", None),  # a control character is text, in either read
    ("1 Q0 b 2\t1 t\x1fx", None),
]

NASTY_QRELS_LINES = [  # the second line of a qrels file after "1 0 a 1": None if it is imported, else the error
    ("1 0 b -1", None),  # to trec_eval: in the pool, not judged; kept as written
    ("1 0 b +2", None),
    ("1 0 b 007", None),
    ("\t1 0 b 1\r", None),
    ("1 0 b 1.5", "relevance '1.5' is not an integer"),  # atol reads 1
    ("1 0 b 1e2", "relevance '1e2' is not an integer"),  # atol reads 1, DuckDB alone 100
    ("1 0 b 0x1", "relevance '0x1' is not an integer"),  # atol reads 0, DuckDB alone 1
    ("1 0 b high", "relevance 'high' is not an integer"),  # atol reads 0
    ("1 0 b \u0663", "relevance '\u0663' is not an integer"),
    ("1 0 b 3000000000", "relevance '3000000000' is not a 32-bit integer"),
    ("1 0 b 1 extra", "expected 4 fields"),  # trec_eval: "Malformed line", unlike text after a run's tag
    ("1 0 b", "expected 4 fields"),
    ("1 0 a 2", "duplicate judgment for question '1', doc 'a'"),
    ("1 0 b\udc80 1", "not UTF-8 text"),
]


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    """One warehouse for the nasty lines, with collection tiny's judgments (QRELS): each case imports its own run
    of it, or its own collection."""
    folder = tmp_path_factory.mktemp("nasty")
    (folder / "qrels.txt").write_text(QRELS)
    warehouse = Warehouse(REPO_ROOT, folder / "warehouse.duckdb")
    qrels = ["--qrels", str(folder / "qrels.txt")]
    assert import_trec(["--collection", "tiny", *qrels, "--db", str(warehouse.db_path)]) == 0
    return warehouse


NASTY = [("run", *case) for case in NASTY_RUN_LINES] + [("qrels", *case) for case in NASTY_QRELS_LINES]


@pytest.mark.parametrize(
    ("number", "kind", "line", "message"),
    [(number, *case) for number, case in enumerate(NASTY)],
    ids=[f"{kind}-{line!r}" for kind, line, _ in NASTY],
)
def test_nasty_lines_are_imported_as_trec_eval_reads_them_or_refused_on_one_line(
    judged: Warehouse,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    number: int,
    kind: str,
    line: str,
    message: str | None,
) -> None:
    first = "1 Q0 a 1 1 t" if kind == "run" else "1 0 a 1"
    path = tmp_path / f"{kind}.txt"
    path.write_bytes(f"{first}\n{line}\n".encode("utf-8", errors="surrogateescape"))
    key = f"nasty{number}"  # the case's own run of collection tiny, or its own collection
    if kind == "run":
        args, written = ["--collection", "tiny", "--run", str(path), "--run-id", key], "raw.rankings where run_id = ?"
    else:
        args, written = ["--collection", key, "--qrels", str(path)], "raw.qrels where collection_id = ?"
    before = dump(judged)
    code = import_trec([*args, "--db", str(judged.db_path)])
    err = capsys.readouterr().err
    if message is None:
        assert code == 0, err
        assert judged.rows(f"select question_id, doc_id from {written} order by all", [key]) == [("1", "a"), ("1", "b")]
    else:
        assert code == 2 and err.count("\n") == 1 and err.startswith(ERROR), err
        assert f"{path}:2: {message}" in err, err
        assert dump(judged) == before
