"""Judgments as versions (docs/judging.md): each `import --judgments` appends the collection's next qrels version;
the measures use the latest (a person's grade over an automatic one, a later version's over an earlier one) or
the version the setting qrels_version names, and every earlier version's numbers stay what they were. A bad
label file is refused in one line naming its line, and nothing is written."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import pytrec_eval

from conftest import Warehouse, warehouse_checksums
from test_trec_agreement import make_collection

pytestmark = pytest.mark.dbt

MEASURES = {"ndcg_cut.3", "P.5", "map"}  # at the collection's cutoffs (the var's k_values: 1, 3, 5, 10, 100)
NAMES = ["P_5", "map", "ndcg_cut_3"]


@pytest.fixture(scope="module")
def versioned(lesson: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> tuple[Warehouse, Path]:
    """The lesson plus a generated collection `gen` (its base qrels and two runs), built: version 0."""
    folder = tmp_path_factory.mktemp("versions")
    qrels, runs = make_collection(random.Random(8), folder / "collection", n_runs=2)
    warehouse = lesson.copy(folder / "warehouse")
    for number, run in enumerate(runs):
        extra = ["--qrels", str(qrels)] if number == 0 else []
        result = warehouse.cli("import", "--collection", "gen", *extra, "--run", str(run), "--run-id", f"run{number}")
        assert result.returncode == 0, result.stderr
    assert warehouse.cli("build").returncode == 0
    return warehouse, folder


def effective_qrels(warehouse: Warehouse, version: int) -> dict[str, dict[str, int]]:
    """The judgments at `version`, directly: the base qrels, then each version's grades in order."""
    qrels: dict[str, dict[str, int]] = {}
    for question_id, doc_id, grade in warehouse.rows(
        "select question_id, doc_id, relevance from raw.qrels where collection_id = 'gen'"
    ):
        qrels.setdefault(question_id, {})[doc_id] = grade
    for question_id, doc_id, grade in warehouse.rows(
        "select question_id, doc_id, grade from raw.judgments where collection_id = 'gen' and qrels_version <= ? "
        "order by qrels_version", [version]
    ):
        qrels.setdefault(question_id, {})[doc_id] = grade
    return qrels


def assert_measures_equal_pytrec_eval(warehouse: Warehouse, version: int) -> None:
    run: dict[str, dict[str, dict[str, float]]] = {}
    for run_id, question_id, doc_id, rank in warehouse.rows(
        "select run_id, question_id, doc_id, rank from raw.rankings where collection_id = 'gen'"
    ):
        run.setdefault(run_id, {}).setdefault(question_id, {})[doc_id] = -float(rank)  # the stored order
    # pytrec_eval 0.5.11 crashed (a segfault) here on version 0, whose question "07" has only negative grades;
    # such questions are left out of this reference (test_trec_agreement checks them)
    qrels = {q: judged for q, judged in effective_qrels(warehouse, version).items() if max(judged.values()) >= 0}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, MEASURES)
    for run_id, ranking in run.items():
        expected = evaluator.evaluate(ranking)
        got = {(q, m): v for q, m, v in warehouse.rows(
            "select question_id, measure_name, value from question_measures where collection_id = 'gen' and "
            "run_id = ? and list_contains(?, measure_name)", [run_id, NAMES])}  # fmt: skip
        assert len(expected) > 10
        for question_id, values in expected.items():
            for measure, value in values.items():
                assert got[question_id, measure] == pytest.approx(value, abs=1e-12), (version, run_id, question_id)


def test_versions_append_and_each_is_measured_as_it_was(versioned: tuple[Warehouse, Path], tmp_path: Path) -> None:
    warehouse, _ = versioned
    measures = ("select columns(lambda c: c not in ('fingerprint', 'invocation_id', 'computed_at')) "
                "from question_measures where collection_id = 'gen' order by all")  # the numbers, not their record
    version0 = warehouse.rows(measures)
    top = warehouse.rows(
        "select distinct question_id, doc_id from raw.rankings as r where collection_id = 'gen' and rank <= 3 "
        "and not exists (select 1 from raw.qrels as q where q.collection_id = 'gen' "
        "and q.question_id = r.question_id and q.doc_id = r.doc_id) order by all limit 40"
    )
    judged = warehouse.rows("select question_id, doc_id, relevance from raw.qrels where collection_id = 'gen' "
                            "and relevance > 0 order by all limit 10")  # fmt: skip
    first = tmp_path / "alice.csv"  # 40 new pairs, 10 relevant judgments made not relevant
    first.write_text("question_id,doc_id,grade,note\n" + "".join(f"{q},{d},{i % 3},\n" for i, (q, d) in enumerate(top))
                     + "".join(f"{q},{d},0,on reflection\n" for q, d, _ in judged))  # fmt: skip
    result = warehouse.cli("import", "--collection", "gen", "--judgments", str(first), "--judge", "alice")
    assert result.returncode == 0, result.stderr
    assert "qrels version 1" in result.stdout and "50 judgments by alice (40 new, 10 changed a grade)" in result.stdout
    second = tmp_path / "bob.jsonl"  # bob changes his mind on 5 of alice's new pairs
    second.write_text("".join(json.dumps({"question_id": q, "doc_id": d, "grade": 2, "judge": "bob"}) + "\n"
                              for q, d in top[:5]))  # fmt: skip
    result = warehouse.cli("import", "--collection", "gen", "--judgments", str(second), "--build")
    assert result.returncode == 0, result.stderr
    versions = warehouse.rows("select qrels_version, judge, judge_kind, n_judgments, n_new, n_changed "
                              "from raw.judgment_versions where collection_id = 'gen' order by 1")  # fmt: skip
    changed_by_bob = sum(1 for i in range(5) if i % 3 != 2)
    assert versions == [(1, "alice", "human", 50, 40, 10), (2, "human", "human", 5, 0, changed_by_bob)]
    assert warehouse.rows("select count(*) from raw.judgments where collection_id = 'gen'") == [(55,)]  # appended

    assert_measures_equal_pytrec_eval(warehouse, 2)
    settings = warehouse.rows("select distinct evaluation_settings from run_measures where collection_id = 'gen'")
    assert [json.loads(text)["qrels_version"] for (text,) in settings] == [2]
    for version in (1, 0):
        assert warehouse.cli("settings", "--collection", "gen", "--set", f"qrels_version={version}").returncode == 0
        assert warehouse.cli("build").returncode == 0
        assert_measures_equal_pytrec_eval(warehouse, version)
    # version 0 again: the very rows the build gave before any label came in
    assert warehouse.rows(measures) == version0
    refused = warehouse.cli("settings", "--collection", "gen", "--set", "qrels_version=3")
    assert refused.returncode == 2 and "qrels_version: 3 is not a version of its judgments (0 to 2" in refused.stderr


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("a.csv", "question_id,doc_id,grade\nq1,doc001,1\nnope,doc001,1\n",
         "a.csv line 3: question 'nope' is not a question of collection 'gen'"),
        ("b.csv", "question_id,doc_id,grade\nq1,nodoc,1\n", "b.csv line 2: doc 'nodoc' is not a document"),
        ("c.csv", "question_id,doc_id,grade\nq1,doc001,1.5\n", "c.csv line 2: grade '1.5' is not an integer"),
        ("d.jsonl", '{"question_id": "q1", "doc_id": "doc001", "grade": "high"}\n',
         "d.jsonl line 1: grade 'high' is not an integer"),
        ("e.csv", "question_id,doc_id,grade\nq1,doc001,1\nq2,doc002,0\nq1,doc001,2\n",
         "e.csv lines 2 and 4: question 'q1', doc 'doc001' judged twice"),
        ("f.csv", "question_id,doc,grade\nq1,doc001,1\n", "f.csv line 1: no column doc_id"),
        ("g.txt", "q1 0 doc001\n", "g.txt line 1: 3 fields, not the 4 of a qrels line"),
        ("h.jsonl", '{"question_id": "q1", "doc_id": "doc001", "grade": true}\n', "grade True is not an integer"),
        ("i.csv", "question_id,doc_id,grade\n", "i.csv: no judgments in it"),
    ],
)
def test_a_bad_label_file_is_refused_in_one_line_and_writes_nothing(
    versioned: tuple[Warehouse, Path], tmp_path: Path, name: str, text: str, message: str
) -> None:
    warehouse = versioned[0].copy(tmp_path / "bad")
    labels = tmp_path / name
    labels.write_text(text)
    before = warehouse_checksums(warehouse.db_path)
    result = warehouse.cli("import", "--collection", "gen", "--judgments", str(labels))
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert warehouse_checksums(warehouse.db_path) == before
