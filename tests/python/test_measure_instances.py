"""Measure instances: a collection lists measures of the registry with parameters (its setting `measures`), and
one build reports each beside the defaults, named as ir_measures prints it, equal to ir_measures 0.4.3.

The references get the warehouse's own ranking as scores -rank (as trec_reference.py does), so the ties of the
generated run are broken once, by the warehouse (trec_eval's rule), for both. ir_measures computes AP, P, R, RR
and nDCG through pytrec_eval (a gain map remaps the qrels' grades first) and RBP through trectools (graded,
(1 - p) * sum of grade_i p^(i - 1) over the grades > 0).

nDCG with a gain map over the whole ranking is trec_eval 10.0's `ndcg` with that map (`-m ndcg.0=0,1=1,2=3`),
compared with the outputs of trec_eval 10.0 itself in tests/data/trec_eval_10/ (make_gains.py; its `ndcg_p` is
not built into 10.0, and pytrec_eval 0.5.11 refuses gain parameters).
"""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from pathlib import Path

import ir_measures
import pytest

from conftest import REPO_ROOT, Warehouse, copy_project
from retrieval_metrics import measure_instances
from retrieval_metrics.cli import main as cli
from retrieval_metrics.export import trec_lines

COLLECTION = "graded"
INSTANCES = ["RBP(p=0.5)", "RBP(p=0.8)", "AP", "AP(rel=2)", "nDCG@10", "nDCG(gains={0:0,1:1,2:3})@10",
             "nDCG(gains={1:2,3:1})", "P(rel=2)@5", "R(rel=3)@10", "RR(rel=2)", "AP(rel=2)@5"]  # fmt: skip
TREC_EVAL_NAMES = {"AP": "map", "AP(rel=2)": "map (-l 2)", "nDCG@10": "ndcg_cut_10", "nDCG(gains={1:2,3:1})":
                   "ndcg (-m ndcg.1=2,3=1)", "P(rel=2)@5": "P_5 (-l 2)", "R(rel=3)@10": "recall_10 (-l 3)",
                   "RR(rel=2)": "recip_rank (-l 2)", "AP(rel=2)@5": "map_cut_5 (-l 2)"}  # fmt: skip


def make_collection(rng: random.Random, folder: Path) -> tuple[Path, list[Path]]:
    """Graded qrels (-1 .. 3, a question without a relevant grade) and two runs with tied scores, unjudged
    documents and a question they lack."""
    folder.mkdir(parents=True)
    qrels = folder / "qrels.txt"
    docs = [f"d{i:02d}" for i in range(40)]
    qrels_lines: list[str] = []
    for number in range(12):
        question = f"q{number:02d}"
        for doc in rng.sample(docs, 16):
            grade = 0 if number == 3 else rng.choice([-1, 0, 0, 1, 1, 2, 3])
            qrels_lines.append(f"{question} 0 {doc} {grade}\n")
    qrels.write_text("".join(qrels_lines))
    return qrels, [make_run(rng, docs, folder / f"run{number}.txt") for number in range(2)]


def make_run(rng: random.Random, docs: list[str], run: Path) -> Path:
    run_lines = []
    for number in range(12):
        question = f"q{number:02d}"
        if number == 5:
            continue  # not in the run
        for doc in rng.sample(docs, rng.randint(1, 25)):
            run_lines.append(f"{question} Q0 {doc} 0 {rng.randint(0, 6) / 2} tag\n")  # ties
    run.write_text("".join(run_lines))
    return run


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    folder = tmp_path_factory.mktemp("instances")
    qrels, runs = make_collection(random.Random(20261204), folder / "collection")
    warehouse = Warehouse(REPO_ROOT, folder / "warehouse.duckdb")
    db = ["--db", str(warehouse.db_path)]
    collection = ["--collection", COLLECTION]
    for number, run in enumerate(runs):
        given = ["--qrels", str(qrels)] if number == 0 else []
        assert cli(["import", *collection, *given, "--run", str(run), "--run-id", f"run{number}", *db]) == 0
    assert cli(["settings", *collection, "--set", "k_values=5,10", "--set", "baseline_run_id=run0",
                "--set", "measures=" + ", ".join(INSTANCES), *db]) == 0  # fmt: skip
    warehouse.build("--select", "+run_measures", "+question_comparisons", "--indirect-selection", "cautious")
    return warehouse


def references(warehouse: Warehouse, run_id: str) -> dict[str, dict[str, float]]:
    """ir_measures' value of every instance per question, on the warehouse's ranking and qrels."""
    rows = warehouse.rows("select question_id, doc_id, relevance from intermediate.int_qrels_unioned "
                          "where collection_id = ?", [COLLECTION])  # fmt: skip
    qrels = [ir_measures.Qrel(q, d, int(g)) for q, d, g in rows]
    ranked = warehouse.rows("select question_id, doc_id, rank from staging.stg_raw__rankings "
                            "where collection_id = ? and run_id = ?", [COLLECTION, run_id])  # fmt: skip
    run = [ir_measures.ScoredDoc(q, d, -float(rank)) for q, d, rank in ranked]
    values: dict[str, dict[str, float]] = {}
    for text in INSTANCES:
        measure = ir_measures.parse_measure(text)
        provider = ir_measures.trectools if measure.NAME == "RBP" else ir_measures.pytrec_eval
        values[str(measure)] = {m.query_id: m.value for m in provider.iter_calc([measure], qrels, run)}
    return values


@pytest.mark.dbt
@pytest.mark.parametrize("run_id", ["run0", "run1"])
def test_every_instance_equals_ir_measures_beside_the_defaults(built: Warehouse, run_id: str) -> None:
    expected = references(built, run_id)
    questions = {q for (q,) in built.rows("select distinct question_id from intermediate.int_qrels_unioned "
                                          "where collection_id = ?", [COLLECTION])}  # fmt: skip
    rows = built.rows("select measure_name, question_id, value from question_measures "
                      "where collection_id = ? and run_id = ?", [COLLECTION, run_id])  # fmt: skip
    ours: dict[str, dict[str, float]] = {}
    for name, question, value in rows:
        ours.setdefault(name, {})[question] = value
    for name, per_question in expected.items():
        assert set(ours[name]) == questions, name
        for question in questions:  # ir_measures leaves out a question the run lacks: 0
            assert math.isclose(ours[name][question], per_question.get(question, 0.0), rel_tol=0, abs_tol=1e-12), (
                name, question, ours[name][question], per_question.get(question))
    assert {"map", "ndcg_cut_10", "P_5", "Judged@10"} <= set(ours)  # the defaults, in the same build
    means = dict(built.rows("select measure_name, value from run_measures where collection_id = ? and run_id = ?",
                            [COLLECTION, run_id]))  # fmt: skip
    for name, per_question in expected.items():
        assert math.isclose(means[name], sum(per_question.get(q, 0.0) for q in questions) / len(questions),
                            rel_tol=0, abs_tol=1e-12), name  # fmt: skip
    # the defaults' numbers at ir_measures' defaults: bit for bit the same SQL over the same rows
    assert means["nDCG@10"] == means["ndcg_cut_10"] and means["AP"] == means["map"]


@pytest.mark.dbt
def test_instances_are_named_as_ir_measures_prints_them_with_trec_eval_beside(built: Warehouse) -> None:
    rows = built.rows("select measure_name, measure_label, trec_eval_name, ci_low, ci_high from run_measures "
                      "where collection_id = ? and run_id = 'run1' and measure_name in (select measure_name from "
                      "intermediate.int_measure_instances where collection_id = ?)", [COLLECTION, COLLECTION])  # fmt: skip
    named = {name: (label, trec_eval) for name, label, trec_eval, _, _ in rows}
    assert set(named) == {str(ir_measures.parse_measure(text)) for text in INSTANCES}
    for text in INSTANCES:
        name = str(ir_measures.parse_measure(text))
        assert named[name] == (name, TREC_EVAL_NAMES.get(text)), text
    assert all(low is not None and low <= high for _, _, _, low, high in rows)  # each has its interval
    compared = {name for (name,) in built.rows("select distinct measure_name from question_comparisons "
                                                "where collection_id = ?", [COLLECTION])}  # fmt: skip
    assert {"RBP(p=0.5)", "AP(rel=2)"} <= compared


@pytest.mark.parametrize(
    ("given", "refusal"),
    [("RBP(p=1.5)", "'RBP(p=1.5)', which parameter p: 1.5 is not a number strictly between 0 and 1"),
     ("AP(rel=0)", "'AP(rel=0)', which parameter rel: 0 is not an integer >= 1"),
     ("AP(p=0.5)", "'AP(p=0.5)', which has no parameter p (its parameters: rel)"),
     ("nDCG(gains={1:-2})@10", "'nDCG(gains={1:-2})@10', which parameter gains: {1: -2} is not a map"),
     ("Foo(p=0.5)", "'Foo(p=0.5)', which names no measure with parameters"),
     ("P(rel=2)", "'P(rel=2)', which needs a cutoff @k"),
     ("RBP@10", "'RBP@10', which takes no cutoff")],
)  # fmt: skip
def test_a_bad_instance_is_refused_before_dbt_naming_it(given: str, refusal: str) -> None:
    reason = measure_instances.check(f"AP, {given}")
    assert reason is not None and reason.startswith(f"holds {refusal}"), reason


def test_names_are_ir_measures_own() -> None:
    for text in [*INSTANCES, "RBP(p=0.80)", "RBP(p=1e-3)", "nDCG(gains={2:3,0:0})", "AP(rel=1)@7"]:
        assert measure_instances.values(text) == [str(ir_measures.parse_measure(text))], text


@pytest.mark.dbt
def test_the_settings_command_refuses_a_bad_instance_in_one_line(built: Warehouse, capsys: pytest.CaptureFixture[str]) -> None:
    copy = built.copy(built.db_path.parent / "refused")
    before = copy.rows("select * from raw.collection_settings order by all")
    status = cli(["settings", "--collection", COLLECTION, "--set", "measures=AP(rel=2), RBP(p=2)", "--db", str(copy.db_path)])
    error = capsys.readouterr().err.strip()
    assert status == 2 and "\n" not in error
    assert error.endswith("setting measures: 'AP(rel=2), RBP(p=2)' holds 'RBP(p=2)', which parameter p: 2 is not a "
                          "number strictly between 0 and 1"), error  # fmt: skip
    assert copy.rows("select * from raw.collection_settings order by all") == before


RBP_ENTRY = '"instance": "RBP(p: probability = 0.8)",'
ENTRY_OF_RBP = "(RBP)"  # its position in the registry changes as measures are added: the name is enough


@pytest.mark.dbt
@pytest.mark.parametrize(
    ("edited", "message"),
    [(RBP_ENTRY.replace("0.8", "1.5"), "key 'instance': parameter p: default \"1.5\" is not a number strictly between 0 and 1"),
     (RBP_ENTRY.replace("probability", "chance"), "key 'instance': parameter p: rule \"chance\" is not one of level, probability, gains"),
     (RBP_ENTRY.replace(")", ")@k"), "key 'instance': \"RBP(p: probability = 0.8)@k\" has @k, but at_k is false")],
    ids=["bad default", "unknown rule", "cutoff disagrees"],
)  # fmt: skip
def test_a_bad_parameter_fails_the_parse_naming_the_entry(tmp_path: Path, edited: str, message: str) -> None:
    project = copy_project(tmp_path).project_dir
    registry = project / "macros" / "measures.sql"
    source = registry.read_text()
    assert source.count(RBP_ENTRY) == 1
    registry.write_text(source.replace(RBP_ENTRY, edited))
    env = {**os.environ, "RETRIEVAL_DB": str(tmp_path / "x.duckdb"), "DBT_TARGET_PATH": str(tmp_path / "target"),
           "DBT_LOG_PATH": str(tmp_path / "logs")}  # fmt: skip
    parsed = subprocess.run([str(Path(sys.executable).parent / "dbt"), "--no-use-colors", "parse", "--project-dir",
                             str(project), "--profiles-dir", str(project)], env=env, capture_output=True, text=True,
                            timeout=300, check=False)  # fmt: skip
    assert parsed.returncode != 0, parsed.stdout[-2000:]
    assert f"{ENTRY_OF_RBP}: {message}" in parsed.stdout, parsed.stdout[-3000:]
    assert "measure registry (macros/measures.sql): entry " in parsed.stdout


TREC_EVAL_10 = REPO_ROOT / "tests" / "data" / "trec_eval_10"
# instance: trec_eval 10.0's output of it on random.qrels and random.run (make_gains.py) and the name it prints;
# IDCG@10 is its dcg of random.ideal.run (the judged documents by grade) under -M 10
TREC_EVAL_10_OUTPUTS = {
    "nDCG(gains={0:0,1:1,2:3})": ("out.random.c.ndcg_gains", "ndcg_0=0,1=1,2=3"),
    "DCG": ("out.random.c.dcg", "dcg"),
    "IDCG": ("out.random.c.dcg", "ideal_dcg"),
    "DCG(gains={0:0,1:1,2:3})": ("out.random.c.dcg_gains", "dcg_0=0,1=1,2=3"),
    "IDCG(gains={0:0,1:1,2:3})": ("out.random.c.ideal_dcg_gains", "ideal_dcg_0=0,1=1,2=3"),
    "DCG@10": ("out.random.c.M10.dcg", "dcg"),
    "IDCG@10": ("out.random.ideal.c.M10.dcg", "dcg"),
}


def trec_eval_10_lines(output: str, measure: str) -> dict[str, str]:
    """question id (or all) -> the value trec_eval 10.0 printed for the measure in the output."""
    lines = [line.split() for line in (TREC_EVAL_10 / output).read_text().splitlines()]
    return {question: value for name, question, value in lines if name == measure}


@pytest.fixture(scope="module")
def trec_eval_10_built(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    """The random collection of tests/data/trec_eval_10 under trec_eval -c (averaging all_questions), with every
    instance of TREC_EVAL_10_OUTPUTS."""
    warehouse = Warehouse(REPO_ROOT, tmp_path_factory.mktemp("trec_eval_10") / "warehouse.duckdb")
    db, collection = ["--db", str(warehouse.db_path)], ["--collection", "random"]
    run = ["--run", str(TREC_EVAL_10 / "random.run"), "--run-id", "random"]
    assert cli(["import", *collection, "--qrels", str(TREC_EVAL_10 / "random.qrels"), *run, *db]) == 0
    assert cli(["settings", *collection, "--set", "k_values=10", "--set", "trec_eval_version=10", "--set",
                "averaging=all_questions", "--measures", *TREC_EVAL_10_OUTPUTS, *db]) == 0  # fmt: skip
    warehouse.build("--select", "+run_measures", "--indirect-selection", "cautious")
    return warehouse


@pytest.mark.dbt
@pytest.mark.parametrize("instance", list(TREC_EVAL_10_OUTPUTS))
def test_an_instance_equals_trec_eval_10_itself(trec_eval_10_built: Warehouse, instance: str) -> None:
    output, printed = TREC_EVAL_10_OUTPUTS[instance]
    theirs = trec_eval_10_lines(output, printed)
    name = measure_instances.values(instance)[0]
    ours = dict(trec_eval_10_built.rows("select question_id, value from question_measures where collection_id = "
                                        "'random' and measure_name = ?", [name]))  # fmt: skip
    ((ours["all"],),) = trec_eval_10_built.rows("select value from run_measures where collection_id = 'random' "
                                                "and measure_name = ?", [name])  # fmt: skip
    assert len(theirs) > 10 and set(theirs) == set(ours), (instance, sorted(set(theirs) ^ set(ours)))
    assert {question: f"{value:.4f}" for question, value in ours.items()} == theirs, instance


@pytest.mark.dbt
def test_the_trec_export_prints_trec_eval_names_only(built: Warehouse) -> None:
    """Instances of trec_eval measures (AP(rel=2) is map's) stay out of `export --format trec`, each line of which
    is the measure as trec_eval prints it, once."""
    with built.connect() as con:
        lines = [line.split("\t") for line in trec_lines(con, COLLECTION, "run1", 4)]
    names = {name.strip() for name, _, _ in lines}
    assert {"map", "P_5", "ndcg_cut_10"} <= names and not any("(" in name or "@" in name or name in {"AP", "RR"}
                                                              for name in names), sorted(names)  # fmt: skip
    assert len(lines) == len({(name.strip(), question) for name, question, _ in lines})
