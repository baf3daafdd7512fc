"""Automatic judges (docs/judging.md): `retrieval-metrics judge` grades a collection's judging_queue (or its judged
pairs) with a plug-in, as the collection's next qrels version (judge_kind automatic, with rationale, latency, the
judge's version and parameters); a person's later grade supersedes the judge's in the measures; a judge that goes
wrong is refused in one line naming the item, and nothing is written."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import pytest

from conftest import Warehouse, cli_in_process, run_cli, warehouse_checksums
from retrieval_metrics.judging import JudgeItem

pytestmark = pytest.mark.dbt

HERE = Path(__file__).parent
EXAMPLES = HERE.parents[1] / "docs" / "examples"
EXAMPLE = "overlap_judge:OverlapJudge"
BROKEN = "plugin_judges:Broken"
WORDS = [f"{stem}{suffix}" for stem in ("tern", "lumo", "vask", "quill", "brom", "sefa") for suffix in "aeiou"]


def write_beir(folder: Path, rng: random.Random) -> Path:
    """A generated BEIR collection: 40 documents and 10 questions over a 30-word vocabulary, 3 judgments each."""
    (folder / "qrels").mkdir(parents=True)
    docs = [(f"d{i:02d}", " ".join(rng.sample(WORDS, 2)), " ".join(rng.choices(WORDS, k=12))) for i in range(40)]
    questions = [(f"q{i:02d}", "what is the " + " and ".join(rng.sample(WORDS, 4))) for i in range(10)]
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n"
                                                 for i, t, x in docs))  # fmt: skip
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in questions))
    qrels = [(q, d, rng.randint(0, 2)) for q, _ in questions for d in rng.sample([d for d, _, _ in docs], 3)]
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n"
                                               + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in qrels))  # fmt: skip
    return folder


def env(warehouse: Warehouse) -> dict[str, str]:
    """The warehouse's command environment with the test judges and the docs' example on PYTHONPATH."""
    path = os.pathsep.join([str(HERE), str(EXAMPLES), os.environ.get("PYTHONPATH", "")])
    return {**warehouse.env, "PYTHONPATH": path}


def judge(warehouse: Warehouse, *args: str, child: bool = False) -> subprocess.CompletedProcess[str]:
    """`retrieval-metrics judge ARGS`: in this process (the judges that return; the worker thread ends with the
    command), in a child for one that hangs (its worker is left behind, as the command leaves it)."""
    if child:
        return run_cli("judge", *args, env=env(warehouse), child=True)
    return cli_in_process("judge", *args, env=env(warehouse))


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, result.stderr
    return result


@pytest.fixture(autouse=True)
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process, the docs' example is importable as it is under PYTHONPATH=docs/examples."""
    monkeypatch.syspath_prepend(str(EXAMPLES))


@pytest.fixture(scope="module")
def pooled(lesson: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    """The lesson plus a generated BEIR collection `gen` ranked by bm25 and keyword_overlap, a person's label file
    (qrels version 1), a qrels-only collection `other` without a pool, then `gen` pooled at depth 5 (built). Read
    it; change a .copy()."""
    folder = tmp_path_factory.mktemp("judge")
    warehouse = lesson.copy(folder / "warehouse")
    ok(warehouse.cli("import", "--collection", "gen", "--beir", str(write_beir(folder / "gen", random.Random(11)))))
    for retriever in ("bm25", "keyword_overlap"):
        warehouse.ranked("--collection", "gen", "--retriever", retriever, "--top-k", "8")
    unjudged = warehouse.rows(
        "select distinct question_id, doc_id from raw.rankings as r where collection_id = 'gen' and run_id = 'bm25' "
        "and rank <= 5 and not exists (select 1 from raw.qrels as q where q.collection_id = 'gen' "
        "and q.question_id = r.question_id and q.doc_id = r.doc_id) order by all limit 4"
    )
    labels = folder / "alice.csv"
    labels.write_text("question_id,doc_id,grade\n" + "".join(f"{q},{d},2\n" for q, d in unjudged))
    ok(warehouse.cli("import", "--collection", "gen", "--judgments", str(labels), "--judge", "alice"))
    other = folder / "other.qrels"
    other.write_text("o1 0 x1 1\no1 0 x2 0\n")
    ok(warehouse.cli("import", "--collection", "other", "--qrels", str(other)))
    ok(warehouse.cli("pool", "--collection", "gen", "--all", "--depth", "5"))
    return warehouse


def queue(warehouse: Warehouse) -> list[tuple[str, str]]:
    return [(q, d) for q, d in warehouse.rows(
        "select question_id, doc_id from judging_queue where collection_id = 'gen' order by question_id, "
        "queue_position")]  # fmt: skip


def items(warehouse: Warehouse, pairs: list[tuple[str, str]]) -> list[JudgeItem]:
    """The JudgeItems of these pairs, from the collection's questions and documents."""
    questions = dict(warehouse.rows("select question_id, question_text from raw.questions where collection_id = 'gen'"))
    documents = {d: (t, x) for d, t, x in warehouse.rows(
        "select doc_id, title, doc_text from raw.documents where collection_id = 'gen'")}  # fmt: skip
    return [JudgeItem(q, questions[q], d, *documents[d]) for q, d in pairs]


def measured(warehouse: Warehouse) -> dict[tuple[str, str], int]:
    """The grades the measures use now, by (question, doc): int_qrels_unioned."""
    rows = warehouse.rows("select question_id, doc_id, relevance from intermediate.int_qrels_unioned "
                          "where collection_id = 'gen'")  # fmt: skip
    return {(q, d): g for q, d, g in rows}


def judgment_tables(warehouse: Warehouse) -> dict[str, list[tuple[object, ...]]]:
    tables = ("judgments", "judgment_versions")
    return {table: warehouse.rows(f"select * from raw.{table} order by all") for table in tables}


def test_the_example_judge_grades_the_queue_and_a_person_later_overrides_it(pooled: Warehouse, tmp_path: Path) -> None:
    from overlap_judge import OverlapJudge

    warehouse = pooled.copy(tmp_path)
    before = queue(warehouse)
    assert len(before) > 30
    expected = {(i.question_id, i.doc_id): OverlapJudge(high=4, low=3).judge(i) for i in items(warehouse, before)}
    assert len({grade for grade, _ in expected.values()}) == 3  # the generated collection gives every grade

    result = ok(judge(warehouse, "--collection", "gen", "--judge", EXAMPLE, "--param", "low=3", "--param", "high=4",
                      "--build"))  # fmt: skip
    line = result.stdout.strip().splitlines()[-1]  # after dbt's lines: the command's one
    assert line.startswith(f"retrieval-metrics judge: collection gen: qrels version 2 from judge {EXAMPLE} (version "
                           f"1.0): {len(before)} judgments of queue pairs ({len(before)} new, 0 changed a grade); "
                           "latency mean ")  # fmt: skip
    assert "; measured on it: published " in line and "next build" not in line
    judge_rows = ("select question_id, doc_id, grade, judge, judge_kind, note, rationale, latency_ms "
                  "from raw.judgments where collection_id = 'gen' and qrels_version = 2 order by all")  # fmt: skip
    rows = warehouse.rows(judge_rows)
    assert {(q, d): (g, r) for q, d, g, *_, r, _ in rows} == expected
    assert all(row[3:6] == (EXAMPLE, "automatic", None) and 0 <= row[7] < 1000 for row in rows)
    versions = ("select qrels_version, judge, judge_kind, n_judgments, n_new, n_changed, judge_version, judge_params "
                "from raw.judgment_versions where collection_id = 'gen' order by qrels_version")  # fmt: skip
    assert pooled.rows(versions) == [(1, "alice", "human", 4, 4, 0, None, None)]  # a label file's: no judge version
    assert warehouse.rows(versions) == [*pooled.rows(versions),
                                        (2, EXAMPLE, "automatic", len(before), len(before), 0, "1.0",
                                         '{"high": 4, "low": 3}')]  # fmt: skip
    assert warehouse.rows("select source from raw.judgment_versions where qrels_version = 2") == [(EXAMPLE,)]
    assert queue(warehouse) == []  # judged, rebuilt: the queue has nothing left
    grades = measured(warehouse)
    assert {pair: grades[pair] for pair in expected} == {pair: grade for pair, (grade, _) in expected.items()}

    # a person's later grades of some of the judge's pairs win in the measures; the judge's rows stay
    overridden = {pair: (grade + 1) % 3 for pair, (grade, _) in list(expected.items())[:6]}
    labels = tmp_path / "bob.csv"
    labels.write_text("question_id,doc_id,grade\n" + "".join(f"{q},{d},{g}\n" for (q, d), g in overridden.items()))
    imported = ok(warehouse.cli("import", "--collection", "gen", "--judgments", str(labels), "--judge", "bob",
                                "--build"))  # fmt: skip
    assert "qrels version 3" in imported.stdout and "6 judgments by bob (0 new, 6 changed a grade)" in imported.stdout
    grades = measured(warehouse)
    assert {pair: grades[pair] for pair in expected} == {
        pair: overridden.get(pair, grade) for pair, (grade, _) in expected.items()}
    assert warehouse.rows(judge_rows) == rows


def test_judged_pairs_are_the_base_and_the_peoples_and_limit_takes_the_first(pooled: Warehouse, tmp_path: Path) -> None:
    warehouse = pooled.copy(tmp_path)
    ok(judge(warehouse, "--collection", "gen", "--judge", "plugin_judges:Shaped", "--limit", "7"))  # automatic
    automatic = set(warehouse.rows("select question_id, doc_id from raw.judgments where qrels_version = 2"))
    assert automatic == set(queue(warehouse)[:7])  # the queue's first 7 (the build is the fixture's)
    people = sorted(set(warehouse.rows(
        "select question_id, doc_id from raw.qrels where collection_id = 'gen' union "
        "select question_id, doc_id from raw.judgments where collection_id = 'gen' and judge_kind = 'human'")))
    assert not automatic <= set(people)

    result = ok(judge(warehouse, "--collection", "gen", "--judge", "plugin_judges:Shaped", "--pairs", "judged"))
    assert f"qrels version 3 from judge plugin_judges:Shaped (version 0.1): {len(people)} judgments of judged pairs" \
        in result.stdout  # fmt: skip
    judged = warehouse.rows("select question_id, doc_id, grade, rationale from raw.judgments where qrels_version = 3 "
                            "order by all")  # fmt: skip
    assert judged == [(q, d, len(d) % 3, None) for q, d in people]  # exactly the pairs people (or the base) judged
    assert warehouse.rows("select judge_version, judge_params from raw.judgment_versions where qrels_version = 3") == [
        ("0.1", "{}")]  # no version attribute: the package's __version__

    ok(judge(warehouse, "--collection", "gen", "--judge", "plugin_judges:Shaped", "--pairs", "judged", "--limit", "5"))
    assert warehouse.rows("select question_id, doc_id from raw.judgments where qrels_version = 4 order by all") == \
        people[:5]  # fmt: skip


@pytest.mark.parametrize(
    ("shape", "rationale"),
    [("int", False), ("pair", True), ("list", True), ("mapping", True), ("mapping_bare", False)],
)
def test_each_accepted_shape_of_an_answer(pooled: Warehouse, tmp_path: Path, shape: str, rationale: bool) -> None:
    warehouse = pooled.copy(tmp_path)
    ok(judge(warehouse, "--collection", "gen", "--judge", "plugin_judges:Shaped", "--param", f"shape={shape}",
             "--limit", "4"))  # fmt: skip
    rows = warehouse.rows("select question_id, doc_id, grade, rationale from raw.judgments where qrels_version = 2")
    assert len(rows) == 4
    assert all(g == len(d) % 3 and r == (f"{q}/{d}" if rationale else None) for q, d, g, r in rows)
    assert warehouse.rows("select judge_params from raw.judgment_versions where qrels_version = 2") == [
        (json.dumps({"shape": shape}),)]


BAD_ANSWERS = {
    "none": "returned None, not a grade: an int, a (grade, rationale) pair or a mapping with grade",
    "str": "returned a str ('relevant'), not a grade",
    "float": "returned a float (1.5), not a grade",
    "bool": "returned a bool (True), not a grade",
    "triple": "returned a tuple of 3 items, not a (grade, rationale) pair",
    "single": "returned a tuple of 1 items, not a (grade, rationale) pair",
    "no_grade": "returned a mapping without grade (its keys: 'rationale')",
    "huge": "gave grade 2147483648, out of the range of grades (32-bit integers)",
    "very_negative": "gave grade -2147483649, out of the range of grades",
    "float_in_pair": "gave a grade that is a float (2.0), not an int",
    "rationale_not_str": "gave a rationale that is an int (42), not a str",
    "grade_none_in_mapping": "gave a grade that is None, not an int",
    "surrogate": "gave a rationale that is not text (surrogates not allowed at character 12)",
}


@pytest.mark.parametrize(
    ("args", "message", "item"),
    [
        pytest.param(["--param", "problem=raises", "--param", "at=3"], "raised ValueError: boom", 3, id="raises"),
        pytest.param(["--param", "problem=exit", "--param", "at=2"], "raised SystemExit: judge quit", 2, id="exit"),
        pytest.param(["--param", "problem=interrupt"], "raised KeyboardInterrupt", 1, id="interrupt"),
        pytest.param(["--param", "problem=hang", "--param", "at=2", "--timeout", "0.5"],
                     "took longer than the timeout, 0.5 s (--timeout)", 2, id="hang"),
        *[pytest.param(["--param", f"problem={problem}", "--param", "at=4"], message, 4, id=problem)
          for problem, message in BAD_ANSWERS.items()],
    ],
)  # fmt: skip
def test_a_judge_that_goes_wrong_is_refused_naming_the_item_and_writes_nothing(
    pooled: Warehouse, tmp_path: Path, args: list[str], message: str, item: int
) -> None:
    warehouse = pooled.copy(tmp_path)
    tables, sums = judgment_tables(warehouse), warehouse_checksums(warehouse.db_path)
    question, doc = queue(warehouse)[item - 1]
    result = judge(warehouse, "--collection", "gen", "--judge", BROKEN, *args, child="hang" in args[1])
    where = f"judge {BROKEN} on queue item {item} (question {question}, doc {doc}): "
    assert result.returncode == 2, result.stderr
    assert f"retrieval-metrics judge: error: {where}{message}" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert judgment_tables(warehouse) == tables and warehouse_checksums(warehouse.db_path) == sums


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--collection", "gen", "--judge", "plugin_judges:CannotBuild"],
         "judge plugin_judges:CannotBuild could not be built: raised SystemExit: no model"),
        (["--collection", "gen", "--judge", "plugin_judges:not_a_judge"],
         "judge plugin_judges:not_a_judge: what it built has no judge(item) method"),
        (["--collection", "gen", "--judge", "plugin_judges"], "judge 'plugin_judges' is not package.module:name"),
        (["--collection", "gen", "--judge", "no_such_module:Judge"], "judge 'no_such_module:Judge': cannot import"),
        (["--collection", "gen", "--judge", "plugin_judges:Missing"], "'plugin_judges' has no 'Missing'"),
        (["--collection", "gen", "--judge", EXAMPLE, "--param", "high=0"],
         f"judge {EXAMPLE} could not be built: raised ValueError: high must be a whole number of terms"),
        (["--collection", "gen", "--judge", EXAMPLE, "--param", "high"], "--param 'high' is not key=value"),
        (["--collection", "gen", "--judge", EXAMPLE, "--limit", "0"], "--limit 0: judge at least 1 item"),
        (["--collection", "gen", "--judge", EXAMPLE, "--timeout", "0"], "--timeout must be a positive number"),
        (["--collection", "gen", "--judge", EXAMPLE, "--pairs", "all"], "invalid choice: 'all'"),
        (["--collection", "nowhere", "--judge", EXAMPLE], "collection 'nowhere' has no judgments yet"),
        (["--collection", "docent", "--judge", EXAMPLE], "collection 'docent' is the lesson's seeds"),
        (["--collection", "a b", "--judge", EXAMPLE], "collection 'a b' is not a plain identifier"),
        (["--collection", "other", "--judge", EXAMPLE],
         "collection 'other' has nothing in judging_queue: run `retrieval-metrics pool --collection other"),
        (["--judge", EXAMPLE], "the following arguments are required: --collection"),
    ],
)
def test_a_bad_judge_command_is_refused_in_one_line_and_writes_nothing(
    pooled: Warehouse, tmp_path: Path, args: list[str], message: str
) -> None:
    warehouse = pooled.copy(tmp_path)
    tables, sums = judgment_tables(warehouse), warehouse_checksums(warehouse.db_path)
    result = judge(warehouse, *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert judgment_tables(warehouse) == tables and warehouse_checksums(warehouse.db_path) == sums


def test_a_warehouse_never_built_has_no_queue_to_judge(warehouse: Warehouse, tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    ok(warehouse.cli("import", "--collection", "tiny", "--qrels", str(qrels)))
    before = warehouse_checksums(warehouse.db_path)
    result = judge(warehouse, "--collection", "tiny", "--judge", EXAMPLE)
    assert result.returncode == 2 and "the warehouse has no judging_queue yet: run `retrieval-metrics pool" in \
        result.stderr, result.stderr  # fmt: skip
    assert warehouse_checksums(warehouse.db_path) == before
    # its judged pairs need no queue: a collection without documents or question text gets None for them
    ok(judge(warehouse, "--collection", "tiny", "--judge", EXAMPLE, "--pairs", "judged"))
    assert warehouse.rows("select question_id, doc_id, grade, rationale from raw.judgments") == [
        ("q1", "d1", 0, "0 of 0 question terms in the document: none")]


def test_an_existing_warehouse_gains_the_new_columns_at_its_next_write(tmp_path: Path) -> None:
    """A warehouse written before the judges (raw.judgments without rationale and latency_ms, raw.judgment_versions
    without judge_version and judge_params) gets them, null, at the next write; its rows stay."""
    import duckdb

    from retrieval_metrics.warehouse import RAW_SCHEMA_DDL, connect, transaction

    path = tmp_path / "old.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute(RAW_SCHEMA_DDL)
        for table, column in (("judgments", "rationale"), ("judgments", "latency_ms"),
                              ("judgment_versions", "judge_version"), ("judgment_versions", "judge_params")):
            con.execute(f"alter table raw.{table} drop column {column}")
        con.execute("insert into raw.judgments values ('c', 1, 'q', 'd', 1, 'alice', 'human', null)")
    with connect(path) as con, transaction(con):
        pass
    with duckdb.connect(str(path), read_only=True) as con:
        assert con.execute("select * from raw.judgments").fetchall() == [
            ("c", 1, "q", "d", 1, "alice", "human", None, None, None)]
        columns = con.execute("select column_name from duckdb_columns() where schema_name = 'raw' "
                              "and table_name = 'judgment_versions' order by column_index").fetchall()  # fmt: skip
    assert [c for (c,) in columns][-2:] == ["judge_version", "judge_params"]
