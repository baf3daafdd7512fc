"""Your own retriever on your own collection (docs/plugins.md): plug-in retrievers loaded by name, any
collection in the warehouse, the Python API, chunk runs, and latency in the leaderboard."""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from conftest import Warehouse
from retrieval_metrics import api, building
from retrieval_metrics.warehouse import InputError

pytestmark = pytest.mark.dbt

HERE = Path(__file__).parent
EXAMPLES = HERE.parents[1] / "docs" / "examples"
CORPUS = [
    ("d1", "Pricing", "the free plan costs nothing and the pro plan costs money"),
    ("d2", "Limits", "rate limits per minute for the free plan"),
    ("d3", "Keys", "api keys authenticate requests"),
    ("d4", "Other", "nothing in common"),
]
QUERIES = [("q1", "what does the free plan cost"), ("q2", "how do api keys work"), ("q3", "rate limits")]
QRELS = [("q1", "d1", 2), ("q1", "d2", 1), ("q2", "d3", 1), ("q3", "d2", 1)]


def write_beir(folder: Path) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in CORPUS)
    )
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in QUERIES))
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{r}\n" for q, d, r in QRELS)
    )
    return folder


class PluginWarehouse(Warehouse):
    """A warehouse whose commands see the test plug-ins and the docs' example on PYTHONPATH."""

    @property
    def env(self) -> dict[str, str]:
        path = os.pathsep.join([str(HERE), str(EXAMPLES), os.environ.get("PYTHONPATH", "")])
        return {**super().env, "PYTHONPATH": path}


@pytest.fixture(scope="module")
def collection(lesson: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> PluginWarehouse:
    """The lesson's warehouse plus an imported BEIR collection `mini`, ranked by bm25 (top 3), by the test
    plug-in (with parameters) and by the docs' example plug-in, then built."""
    folder = tmp_path_factory.mktemp("plugins")
    copy = lesson.copy(folder / "warehouse")
    warehouse = PluginWarehouse(copy.project_dir, copy.db_path, copy.target_dir, copy.cli_target_dir)
    imported = warehouse.cli("import", "--collection", "mini", "--beir", str(write_beir(folder / "mini")))
    assert imported.returncode == 0, imported.stderr
    warehouse.ranked("--collection", "mini", "--retriever", "bm25", "--top-k", "3")
    ranked = warehouse.rank("--collection", "mini", "--retriever", "plugin_retrievers:WordCount",
                            "--param", "bonus=0.5", "--param", "favourite=d4")  # fmt: skip
    assert ranked.returncode == 0, ranked.stderr
    assert ranked.stdout.startswith("retrieval-metrics rank: wrote run mini/WordCount: 12 ranked docs for 3 questions")
    warehouse.ranked("--collection", "mini", "--retriever", "tfidf_retriever:TfidfRetriever",
                     "--param", "sublinear_tf=true", "--top-k", "2", "--run-id", "tfidf")  # fmt: skip
    fused = warehouse.cli("fuse", "--collection", "mini", "--runs", "bm25,WordCount", "--run-id", "hybrid")
    assert fused.returncode == 0, fused.stderr
    chunked = warehouse.rank("--collection", "mini", "--retriever", "plugin_retrievers:Chunked", "--chunks")
    assert chunked.returncode == 0, chunked.stderr
    return warehouse.built()


def rankings(warehouse: Warehouse, run_id: str, collection_id: str = "mini") -> dict[str, list[tuple[str, float]]]:
    rows = warehouse.rows(
        "select question_id, list((doc_id, score) order by rank) from raw.rankings "
        "where collection_id = ? and run_id = ? group by question_id order by question_id",
        [collection_id, run_id],
    )
    return {q: [tuple(pair) for pair in ranked] for q, ranked in rows}


def test_builtin_and_plugin_retrievers_rank_an_imported_collection(collection: PluginWarehouse) -> None:
    bm25 = rankings(collection, "bm25")
    assert [len(ranked) for ranked in bm25.values()] == [3, 3, 3]  # --top-k 3
    assert [doc for doc, _ in bm25["q2"]][:1] == ["d3"]
    plugin = rankings(collection, "WordCount")
    # q1: d1 and d2 both have "the", "free", "plan": a tie, broken by doc id descending (trec_eval's rule);
    # d4 has the 0.5 bonus (--param bonus=0.5 --param favourite=d4)
    assert plugin["q1"] == [("d2", 3.0), ("d1", 3.0), ("d4", 0.5), ("d3", 0.0)]
    assert [doc for doc, _ in plugin["q3"]] == ["d2", "d4", "d3", "d1"]  # d2: 2 words; d4 0.5; d3, d1 tie at 0
    ((retriever, parameters),) = collection.rows(
        "select retriever, parameters from raw.runs where collection_id = 'mini' and run_id = 'WordCount'")
    assert retriever == "plugin_retrievers:WordCount"
    assert json.loads(parameters) == {"plugin": "plugin_retrievers:WordCount", "params": {"bonus": 0.5, "favourite": "d4"},
                                      "version": "0.3"}  # fmt: skip
    latencies = collection.rows(
        "select question_id, latency_ms from raw.question_latencies where run_id = 'WordCount' order by 1")
    assert [q for q, _ in latencies] == ["q1", "q2", "q3"] and all(0 <= ms < 1000 for _, ms in latencies)
    assert [len(ranked) for ranked in rankings(collection, "tfidf").values()] == [2, 2, 2]
    assert json.loads(collection.rows("select parameters from raw.runs where run_id = 'tfidf'")[0][0]) == {
        "plugin": "tfidf_retriever:TfidfRetriever", "params": {"sublinear_tf": True}, "version": "1.0", "top_k": 2}


def test_top_k_cuts_what_a_plugin_returns(collection: PluginWarehouse, tmp_path: Path) -> None:
    copy = collection.copy(tmp_path)
    warehouse = PluginWarehouse(copy.project_dir, copy.db_path, copy.target_dir, copy.cli_target_dir)
    warehouse.ranked("--collection", "mini", "--retriever", "plugin_retrievers:EveryDoc", "--top-k", "2")
    # the top 2 by score, ties by doc id descending: q2 and q3 have one doc that matches, then d4 (of d1, d2, d4)
    assert {q: [doc for doc, _ in ranked] for q, ranked in rankings(warehouse, "EveryDoc").items()} == {
        "q1": ["d2", "d1"], "q2": ["d3", "d4"], "q3": ["d2", "d4"]}


def test_the_leaderboard_shows_latency_where_a_run_reports_it(collection: PluginWarehouse) -> None:
    rows = collection.rows(
        "select run_id, latency_mean_ms, latency_p50_ms, latency_p95_ms from run_leaderboard "
        "where collection_id = 'mini' and k = 1 order by run_id")
    by_run = {run_id: values for run_id, *values in rows}
    assert sorted(by_run) == ["Chunked", "WordCount", "bm25", "hybrid", "tfidf"]
    assert by_run["hybrid"] == [None, None, None]  # fusion records no latency
    assert all(value is not None for value in by_run["Chunked"] + by_run["tfidf"] + by_run["bm25"])  # built-in too
    measured = collection.rows(
        "select avg(latency_ms), quantile_cont(latency_ms, 0.5), quantile_cont(latency_ms, 0.95) "
        "from raw.question_latencies where run_id = 'WordCount'")[0]
    assert by_run["WordCount"] == list(measured)
    assert by_run["WordCount"][1] <= by_run["WordCount"][2]


def test_the_report_plots_quality_against_latency(collection: PluginWarehouse, tmp_path: Path) -> None:
    from retrieval_metrics.report import write_report

    with collection.connect() as con:
        write_report(con, "warehouse.duckdb", tmp_path / "report")
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert (tmp_path / "report" / "mini-latency.png").stat().st_size > 5000
    assert 'id="chart-mini-latency"' in page
    assert (tmp_path / "report" / "docent-latency.png").exists()  # Docent's built-in runs record latency too


PROBLEMS = [
    ("raises", "question 'q2': the retriever raised RuntimeError: index is offline"),
    ("unknown_doc", "question 'q2': unknown doc id 'no-such-doc' (not a document of 'mini')"),
    ("duplicate", "question 'q2': doc 'd3' is given 2 times"),
    ("nan", "question 'q2': doc 'd3' has a non-finite score (nan)"),
    ("not_a_pair", "question 'q2': result 5 (('lonely',)) is not a (doc_id: str, score) pair"),
]


@pytest.mark.parametrize(("problem", "message"), PROBLEMS, ids=[p for p, _ in PROBLEMS])
def test_a_plugins_bad_output_is_refused_in_one_line_and_nothing_is_written(
    collection: PluginWarehouse, tmp_path: Path, problem: str, message: str
) -> None:
    copy = collection.copy(tmp_path)
    warehouse = PluginWarehouse(copy.project_dir, copy.db_path, copy.target_dir, copy.cli_target_dir)
    before = warehouse.rows("select * from raw.runs order by all")
    result = warehouse.rank("--collection", "mini", "--retriever", "plugin_retrievers:Broken", "--run-id", "WordCount",
                            "--param", f"problem={problem}", "--param", "trigger=api")  # fmt: skip
    assert result.returncode == 2
    assert result.stderr == f"retrieval-metrics rank: error: {message}\n"
    assert warehouse.rows("select * from raw.runs order by all") == before  # WordCount's run still the old one
    assert rankings(warehouse, "WordCount") == rankings(collection, "WordCount")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--retriever", "no_such_module:X"], "retriever 'no_such_module:X': cannot import 'no_such_module'"),
        (["--retriever", "plugin_retrievers:Missing"], "retriever 'plugin_retrievers:Missing': 'plugin_retrievers' has no 'Missing'"),
        (["--retriever", "plugin_retrievers:not_a_retriever"], "what it built has no search(question, k) method"),
        (["--retriever", "plugin_retrievers:WordCount", "--param", "colour=red"], "could not be built: TypeError"),
        (["--retriever", "plugin_retrievers:WordCount", "--param", "nokey"], "--param 'nokey' is not key=value"),
        (["--retriever", "bm25", "--param", "k1=2"], "--param and --chunks are for a plug-in retriever"),
        (["--retriever", "bm25", "--top-k", "0"], "--top-k must be at least 1, not 0"),
    ],
)
def test_bad_plugin_arguments_exit_2_in_one_line(
    collection: PluginWarehouse, tmp_path: Path, args: list[str], message: str
) -> None:
    copy = collection.copy(tmp_path)
    warehouse = PluginWarehouse(copy.project_dir, copy.db_path, copy.target_dir, copy.cli_target_dir)
    result = warehouse.rank("--collection", "mini", *args)
    assert result.returncode == 2 and message in result.stderr and result.stderr.count("\n") == 1, result.stderr


def test_a_notebook_writes_a_run_in_three_lines_and_builds(collection: PluginWarehouse, tmp_path: Path) -> None:
    """The README's three lines: rows the notebook already has, written with the import's checks and tie rule,
    then built; the run appears in the leaderboard with its latency."""
    database = collection.copy(tmp_path).db_path
    rows = [("q1", "d2", 1.0, 12.5), ("q1", "d1", 1.0, 12.5), ("q2", "d3", 0.5, 3.0), ("q3", "d2", 2.0, 4.0)]
    import retrieval_metrics as rm

    written = rm.write_run("mini", "notebook", rows, database=database)
    env = {**collection.env, "RETRIEVAL_DB": str(database)}  # the commands' environment, as the fixture built
    old = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        line = rm.build(database=database)  # what the new run changed (the fixture's build was recorded)
        (loaded,) = building.LOADED.values()  # dbt stays loaded in this process for the next rm.build()
        manifest = loaded.manifest
        rm.write_run("mini", "notebook_next", rows[::-1], database=database)
        assert rm.build(database=database).startswith("published ")
        assert list(building.LOADED.values()) == [loaded] and loaded.manifest is manifest  # not parsed again
    finally:
        for name, value in old.items():
            os.environ.pop(name) if value is None else os.environ.__setitem__(name, value)
    assert written == 4 and line.startswith("published ")
    with duckdb.connect(str(database), read_only=True) as con:
        # equal scores: doc id descending, as trec_eval ranks them
        assert con.execute("select doc_id from raw.rankings where run_id = 'notebook' and question_id = 'q1' "
                           "order by rank").fetchall() == [("d2",), ("d1",)]  # fmt: skip
        recall, p50 = con.execute("select recall, latency_p50_ms from run_leaderboard "
                                  "where collection_id = 'mini' and run_id = 'notebook' and k = 1").fetchone()  # fmt: skip
    # recall@1: q1's top doc is d2 (the tie with d1, broken by doc id), one of its two relevant docs; q2, q3: 1
    assert p50 == 4.0 and recall == pytest.approx((0.5 + 1 + 1) / 3, abs=1e-15)
    with duckdb.connect(str(database), read_only=True) as con:
        assert con.execute("select count(*) from run_leaderboard where run_id = 'notebook_next'").fetchone()[0] > 0
    # the same rows as a pandas DataFrame and as a DuckDB relation: the same run
    frame = pd.DataFrame(rows, columns=["question_id", "doc_id", "score", "latency_ms"])
    rm.write_run("mini", "from_frame", frame, database=database)
    rm.write_run("mini", "from_relation", duckdb.connect().from_df(frame), database=database)
    with duckdb.connect(str(database), read_only=True) as con:
        runs = [con.execute("select question_id, doc_id, rank, score from raw.rankings where run_id = ? order by all",
                            [run_id]).fetchall() for run_id in ("notebook", "from_frame", "from_relation")]  # fmt: skip
        latencies = [con.execute("select question_id, latency_ms from raw.question_latencies where run_id = ? "
                                 "order by all", [run_id]).fetchall() for run_id in ("notebook", "from_frame")]  # fmt: skip
    assert runs[0] == runs[1] == runs[2] and latencies[0] == latencies[1]


def test_the_api_refuses_bad_rows_and_writes_nothing(collection: PluginWarehouse, tmp_path: Path) -> None:
    database = collection.copy(tmp_path).db_path
    cases = [
        ([("q1", "d1", 1.0), ("q1", "d1", 2.0)], "question 'q1': doc 'd1' is given 2 times"),
        ([("q1", "d1", float("inf"))], "question 'q1': doc 'd1' has a non-finite score (inf)"),
        ([("q1", "zz", 1.0)], "question 'q1': unknown doc id 'zz' (not a document of 'mini')"),
        ([("q1", "d1", 1.0, 5.0), ("q1", "d2", 1.0, 6.0)], "question 'q1': more than one latency given"),
        ([("q1", "d1")], "row 1: 2 values, not (question_id, doc_id, score[, latency_ms])"),
    ]
    for rows, message in cases:
        with pytest.raises(InputError) as error:
            api.write_run("mini", "bad", rows, database=database)
        assert str(error.value) == message
    with pytest.raises(InputError, match="collection 'nowhere' has no judgments yet"):
        api.write_run("nowhere", "bad", [("q1", "d1", 1.0)], database=database)
    with duckdb.connect(str(database), read_only=True) as con:
        assert con.execute("select count(*) from raw.runs where run_id = 'bad'").fetchone() == (0,)


def test_a_chunk_run_ranks_documents_by_their_best_chunk_and_keeps_the_chunks(
    collection: PluginWarehouse, tmp_path: Path
) -> None:
    database = collection.copy(tmp_path).db_path
    chunks = [("q1", "d1#0", 0.2), ("q1", "d1#1", 0.9), ("q1", "d2#0", 0.5), ("q1", "d2#3", 0.7),
              ("q2", "d3#7", 1.0)]  # fmt: skip
    api.write_run("mini", "maxp", chunks, chunk_rule="maxp", database=database)
    api.write_run("mini", "sump", chunks, chunk_rule="sump", database=database)
    with duckdb.connect(str(database), read_only=True) as con:
        ranked = dict(con.execute(
            "select run_id, list((doc_id, score) order by rank) from raw.rankings "
            "where run_id in ('maxp', 'sump') and question_id = 'q1' group by run_id").fetchall())  # fmt: skip
        assert [tuple(p) for p in ranked["maxp"]] == [("d1", 0.9), ("d2", 0.7)]  # the best chunk
        assert [tuple(p) for p in ranked["sump"]] == [("d2", 0.5 + 0.7), ("d1", 0.2 + 0.9)]  # the sum
        assert con.execute("select chunk_id, doc_id, rank from raw.chunk_rankings where run_id = 'maxp' "
                           "and question_id = 'q1' order by rank").fetchall() == [  # fmt: skip
            ("d1#1", "d1", 1), ("d2#3", "d2", 2), ("d2#0", "d2", 3), ("d1#0", "d1", 4)]
        assert json.loads(con.execute("select parameters from raw.runs where run_id = 'sump'").fetchone()[0]) == {
            "chunk_rule": "sump"}
    with pytest.raises(InputError, match="question 'q1': chunk id 'd1' is not doc#chunk"):
        api.write_run("mini", "maxp", [("q1", "d1", 1.0)], chunk_rule="maxp", database=database)


def test_a_plugin_that_returns_chunks(collection: PluginWarehouse) -> None:
    # each doc's chunks score s and s - 1: its best chunk gives it WordCount's score (without the bonus)
    word_count = {q: sorted([(d, s - 0.5 if d == "d4" else s) for d, s in ranked], key=lambda p: (-p[1], p[0]))
                  for q, ranked in rankings(collection, "WordCount").items()}  # fmt: skip
    chunked = {q: sorted(ranked, key=lambda p: (-p[1], p[0])) for q, ranked in rankings(collection, "Chunked").items()}
    assert chunked == word_count
    assert collection.rows("select count(*) from raw.chunk_rankings where run_id = 'Chunked'") == [(24,)]
    parameters = json.loads(collection.rows("select parameters from raw.runs where run_id = 'Chunked'")[0][0])
    assert parameters["chunk_rule"] == "maxp"
