"""Random TREC qrels and runs, imported and built, agree with the references to 1e-9: every per-question value
and every mean, of the wide tables (question_metrics / run_metrics: pytrec_eval) and of the long ones
(question_measures / run_measures: pytrec_eval for trec_eval's measures, ir_measures for Judged@k, ERR@k and
nDCG(dcg='exp-log2')@k), under trec_eval's options. The generator deliberately makes the cases where
evaluators disagree. The fast tests (no dbt) pin the references' behaviour the comparison relies on."""

from __future__ import annotations

import math
import random
import re
import subprocess
from pathlib import Path

import ir_measures
import pytest
import pytrec_eval

from conftest import REPO_ROOT, Warehouse
from retrieval_metrics.cli import main as cli
from retrieval_metrics.export import trec_lines
from trec_reference import (
    IPREC_AT_RECALL,
    MIN_GEO_MEAN,
    PRINTED_PRECISION,
    Settings,
    assert_matches_trec_eval,
    assert_measures_match_references,
    gdeval_script,
    ir_measures_reference,
    trec_eval_rbp,
    references,
    trec_order,
)

KS = [1, 3, 5, 10]
# trec_eval 10.0's test collection and its output of `trec_eval -m all_trec -q` (usnistgov/trec_eval, test/)
TREC_EVAL_TEST = REPO_ROOT / "tests" / "data" / "trec_eval_10"
VERSIONS = ["9", "10"]  # trec_eval_version
# trec_eval 10.0's `-q -m all_trec` on a random collection (tests/data/trec_eval_10/make_random.py), each output
# file with the collection settings that are its options: averaging (-c), relevance_level (-l),
# judged_docs_only (-J); every family's default cutoffs among k_values, trec_eval_version 10
TREC_EVAL_RUNS = {
    "out.random": {"averaging": "retrieved_only"},  # trec_eval 10.0 refuses a qrels question missing from the run
    "out.random.c": {"averaging": "all_questions"},  # without -c: run on random.qrels without q05 (README.md)
    "out.random.c.l2.J": {"averaging": "all_questions", "relevance_level": 2, "judged_docs_only": "true"},
    "out.random.c.M10": {"averaging": "all_questions", "max_docs_per_question": 10},
}
ALL_TREC_CUTOFFS = "1,5,10,15,20,30,100,200,500,1000"  # success 1, 5, 10; P, recall, ... 5 .. 1000; unj 5, 10, 20
NOT_MEASURES = {"runid", "relstring"}  # the run's name, and the first ranks' grades as a string
PRINTED_4 = 5e-5 + 1e-12  # trec_eval prints 4 decimals
READ = ["+question_metrics", "+run_metrics", "+question_measures", "+run_measures"]  # the marts checked here
GRADES = [-2, -1, 0, 0, 1, 1, 2, 3, 4]
# Every pair of (relevance level, -J, averaging) in five collections' own settings, one build; ERR's maximum grade
# moved once; BEIR's ignore_identical_ids once; trec_eval's -M once, with -J (-M cuts first).
SETTINGS = [
    Settings(relevance_level=1, judged_docs_only=False, averaging="all_questions"),
    Settings(relevance_level=1, judged_docs_only=False, averaging="retrieved_only", err_max_grade=5),
    Settings(relevance_level=1, judged_docs_only=True, averaging="retrieved_only"),
    Settings(relevance_level=2, judged_docs_only=False, averaging="retrieved_only"),
    Settings(relevance_level=2, judged_docs_only=True, averaging="all_questions"),
    Settings(relevance_level=1, judged_docs_only=False, averaging="retrieved_only", ignore_identical_ids=True),
    Settings(relevance_level=1, judged_docs_only=True, averaging="all_questions", max_docs_per_question=4),
]


def make_collection(rng: random.Random, folder: Path, n_runs: int) -> tuple[Path, list[Path]]:
    """Write one qrels file and n_runs run files with every awkward case we know of."""
    folder.mkdir(parents=True)
    question_ids = ["7", "07", "007", "q-1", "Q.2"] + [f"q{i}" for i in range(25)]
    doc_ids = ["1", "01", "001", "10", "9", "d.9", "D9"] + [f"doc{i:03d}" for i in range(60)]
    qrels: dict[str, dict[str, int]] = {}
    for position, question_id in enumerate(question_ids[:-3]):  # the last 3 are in runs only: ignored
        for doc_id in rng.sample(doc_ids, rng.randint(1, 10)):
            if position == 0:
                grade = 0  # "7": only grade-0 judgments
            elif position == 1:
                grade = rng.choice([-2, -1])  # "07": only negative grades
            elif position == 2:
                grade = rng.choice([0, 1])  # "007": nothing relevant at relevance level 2
            else:
                grade = rng.choice(GRADES)
            qrels.setdefault(question_id, {})[doc_id] = grade
    path = folder / "qrels.txt"
    path.write_text("".join(f"{q} 0 {d} {grade}\n" for q, judgments in qrels.items() for d, grade in judgments.items()))
    runs: list[Path] = []
    for run_number in range(n_runs):
        lines: list[str] = []
        for question_id in question_ids:
            if rng.random() < 0.15:
                continue  # question missing from the run
            length = rng.choice([1, 2, 4, 12, 30])  # often shorter than k
            judged = list(qrels.get(question_id, {}))
            unjudged = [doc_id for doc_id in doc_ids if doc_id not in judged]
            kind = rng.random()
            if kind < 0.1:
                docs = rng.sample(unjudged, length)  # nothing judged: an empty ranking under -J
            elif kind < 0.55:
                docs = rng.sample(judged, min(length, len(judged))) + rng.sample(unjudged, rng.randint(0, length))
            else:
                docs = rng.sample(doc_ids, length)
            for doc_id in docs:
                style = rng.random()
                if style < 0.4:
                    score = f"{rng.randint(0, 4) / 2:.1f}"  # coarse: many ties, broken by docno
                elif style < 0.6:
                    score = f"{rng.uniform(-1, 1):.3e}"  # exponent notation, negative scores
                elif style < 0.8:
                    base = rng.randint(1, 3) / 10  # equal as 32-bit floats, different as doubles
                    score = repr(base + rng.choice([0.0, 1e-10, -1e-10]))
                else:
                    score = repr(rng.uniform(0, 100))
                separator = rng.choice([" ", "\t"])
                lines.append(separator.join([question_id, "Q0", doc_id, str(rng.randint(1, 999)), score, "tag"]))
        rng.shuffle(lines)  # file order and the rank column mean nothing to trec_eval
        run_path = folder / f"run{run_number}.txt"
        run_path.write_text("\n".join(lines) + "\n")
        runs.append(run_path)
    return path, runs


# Hand-made questions for the cases a random collection may miss: (judgments, run lines "doc score").
CRAFTED: dict[str, tuple[dict[str, int], list[str]]] = {
    # iprec_at_recall_0.70 of 3 relevant docs needs 2 of them: 0.7 * 3 + 0.9 < 3 as doubles
    "iprec": ({"r1": 2, "r2": 2, "r3": 2}, ["r1 7", "x1 6", "r2 5", "x2 4", "x3 3", "x4 2", "r3 1"]),
    # one 32-bit float: "b" first (doc id descending); "c" and "d" tie exactly
    "float32_tie": ({"a": 1, "c": 2}, [f"a {0.1 + 1e-10!r}", "b 0.1", "c 0.05", "d 0.05"]),
    # a negative grade above the relevant doc: not judged non-relevant for bpref; -J drops it
    "negative_above": ({"neg": -1, "neg2": -2, "rel": 1, "zero": 0}, ["neg 4", "x 3", "rel 2", "zero 1", "neg2 0"]),
    # nothing judged retrieved: an empty ranking under -J, with and without relevant docs
    "unjudged_only": ({"r": 2, "s": 1}, ["x 2", "y 1"]),
    "unjudged_only_no_relevant": ({"z": 0}, ["x 1"]),
    # relevant at level 1 only: trec_eval's ndcg still gains at level 2
    "grade_1_only": ({"a": 1, "b": 1, "z": 0}, ["z 3", "a 2", "b 1"]),
    # ERR's stopping probabilities near 1, longer than every k
    "high_grades": ({"a": 4, "b": 4, "c": 3, "d": 0}, [f"{doc} {12 - i}" for i, doc in enumerate("dabcefghijkl")]),
    "not_in_run": ({"r": 1}, []),
    # the question's own id retrieved (BEIR's ignore_identical_ids drops it, the qrels keep it), and one whose
    # only retrieved document is its own id: no ranking left
    "self": ({"self": 1, "r": 1}, ["x 4", "self 3", "r 2", "y 1"]),
    "only_self": ({"only_self": 2}, ["only_self 1"]),
    "only_in_run": ({}, ["r 1"]),
}


def make_crafted_collection(folder: Path) -> tuple[Path, list[Path]]:
    """The CRAFTED questions as a qrels file and one run file."""
    folder.mkdir(parents=True)
    qrels, run = folder / "qrels.txt", folder / "run0.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, (judged, _) in CRAFTED.items() for d, g in judged.items()))
    lines = [f"{q} Q0 {doc_and_score.replace(' ', ' 0 ')} tag\n" for q, (_, run_lines) in CRAFTED.items()
             for doc_and_score in run_lines]  # fmt: skip
    run.write_text("".join(lines))
    return qrels, [run]


def parse_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        question_id, _, doc_id, grade = line.split()
        qrels.setdefault(question_id, {})[doc_id] = int(grade)
    return qrels


def parse_run(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        question_id, _, doc_id, _, score, _ = line.split()
        run.setdefault(question_id, {})[doc_id] = float(score)
    return run


@pytest.fixture(scope="module")
def collections(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[Path]]]:
    rng = random.Random(20261202)
    root = tmp_path_factory.mktemp("trec")
    made = {f"random{i}": make_collection(rng, root / f"random{i}", n_runs=2) for i in range(2)}
    return {**made, "crafted": make_crafted_collection(root / "crafted")}


def collection_id(name: str, settings: Settings) -> str:
    """The collection `name` imported under these settings: its own settings (per collection, in one build)."""
    return f"{name}-{settings.label}"


@pytest.fixture(scope="module")
def imported(
    tmp_path_factory: pytest.TempPathFactory, collections: dict[str, tuple[Path, list[Path]]]
) -> Warehouse:
    """Every collection and run imported once per settings, each copy with those settings as its own, and built
    once: what the checks read and everything upstream, with their tests (the comparisons and the report's marts
    are checked under other settings by test_incremental)."""
    folder = tmp_path_factory.mktemp("agreement")
    warehouse = Warehouse(REPO_ROOT, folder / "warehouse.duckdb")
    db = ["--db", str(warehouse.db_path)]
    for settings in SETTINGS:
        for name, (qrels, runs) in collections.items():
            collection = ["--collection", collection_id(name, settings)]
            for number, run in enumerate(runs):
                given = ["--qrels", str(qrels)] if number == 0 else []
                assert cli(["import", *collection, *given, "--run", str(run), "--run-id", f"run{number}", *db]) == 0
            assert cli(["settings", *collection, *settings.collection_settings(KS), *db]) == 0
    for version in VERSIONS:  # trec_eval 10.0's own test collection, under each version, as trec_eval runs it
        collection = ["--collection", f"trec_eval_test-{version}"]
        run = ["--run", str(TREC_EVAL_TEST / "results.test"), "--run-id", "STANDARD"]
        assert cli(["import", *collection, "--qrels", str(TREC_EVAL_TEST / "qrels.test"), *run, *db]) == 0
        version_and_averaging = ["--set", f"trec_eval_version={version}", "--set", "averaging=retrieved_only"]
        assert cli(["settings", *collection, *version_and_averaging, *db]) == 0
    for version in VERSIONS:  # a run whose scores tie only as 32-bit floats, set to each version after its import
        collection = ["--collection", f"float_ties-{version}"]
        run = ["--run", str(TREC_EVAL_TEST / "float_ties.run"), "--run-id", "float_ties"]
        assert cli(["import", *collection, "--qrels", str(TREC_EVAL_TEST / "float_ties.qrels"), *run, *db]) == 0
        given = ["--set", f"k_values={ALL_TREC_CUTOFFS}", "--set", f"trec_eval_version={version}"]
        assert cli(["settings", *collection, *given, *db]) == 0
    for output, options in TREC_EVAL_RUNS.items():  # the random collection, once per trec_eval output
        collection = ["--collection", f"trec_eval_{output.replace('.', '_')}"]
        run = ["--run", str(TREC_EVAL_TEST / "random.run"), "--run-id", "random"]
        assert cli(["import", *collection, "--qrels", str(TREC_EVAL_TEST / "random.qrels"), *run, *db]) == 0
        given = {"k_values": ALL_TREC_CUTOFFS, "trec_eval_version": 10, **options}
        assert cli(["settings", *collection, *[a for n, v in given.items() for a in ("--set", f"{n}={v}")], *db]) == 0
    warehouse.build("--select", *READ, "--indirect-selection", "cautious")
    return warehouse


@pytest.mark.dbt
@pytest.mark.parametrize("settings", SETTINGS, ids=lambda settings: settings.label)
def test_every_value_and_mean_equals_the_references(
    imported: Warehouse, collections: dict[str, tuple[Path, list[Path]]], settings: Settings
) -> None:
    checked = 0
    with imported.connect() as con:
        for name, (qrels_path, runs) in collections.items():
            qrels = parse_qrels(qrels_path)
            for number, run_path in enumerate(runs):
                run = parse_run(run_path)
                checked += assert_measures_match_references(
                    con, collection_id(name, settings), f"run{number}", qrels, run, KS, settings
                )
        if settings.is_default:  # the wide tables: trec_eval's defaults
            for name, (qrels_path, runs) in collections.items():
                qrels = parse_qrels(qrels_path)
                for number, run_path in enumerate(runs):
                    # one row per qrels question and k: questions only in the run are ignored
                    questions = con.execute(
                        "select distinct question_id from question_metrics where collection_id = ? and run_id = ?",
                        [collection_id(name, settings), f"run{number}"],
                    ).fetchall()
                    assert {row[0] for row in questions} == set(qrels)
                    checked += assert_matches_trec_eval(
                        con, collection_id(name, settings), f"run{number}", qrels, parse_run(run_path), KS,
                        settings.averaging, 1e-9,
                    )  # fmt: skip
    assert checked > 5000


@pytest.mark.dbt
def test_each_trec_eval_version_counts_iprec_levels_as_its_trec_eval(imported: Warehouse) -> None:
    """iprec_at_recall_* and 11pt_avg, per question and over the run: under version 10, what trec_eval 10.0
    prints for its own test collection (4 decimals); under 9, pytrec_eval's (trec_eval 9), which differs from
    trec_eval 10.0 on this run."""
    printed = {}
    for line in (TREC_EVAL_TEST / "out.test.aq").read_text().splitlines():
        measure, question_id, value = line.split()
        if measure.startswith("iprec_at_recall_") or measure == "11pt_avg":
            printed[(question_id, measure)] = float(value)
    qrels, run = parse_qrels(TREC_EVAL_TEST / "qrels.test"), parse_run(TREC_EVAL_TEST / "results.test")
    trec_eval_9 = pytrec_eval.RelevanceEvaluator(qrels, {"iprec_at_recall", "11pt_avg"}).evaluate(run)
    for version in VERSIONS:
        ours = {(question_id, name): value for question_id, name, value in imported.rows(
            "select question_id, measure_name, value from question_measures where collection_id = ? "
            "and (measure like 'iprec_at_recall%' or measure = '11pt_avg') and is_averaged "
            "union all select 'all', measure_name, value from run_measures where collection_id = ? "
            "and (measure like 'iprec_at_recall%' or measure = '11pt_avg')", [f"trec_eval_test-{version}"] * 2)}  # fmt: skip
        assert set(ours) == set(printed)
        if version == "10":
            far = {key: (ours[key], value) for key, value in printed.items() if abs(ours[key] - value) > PRINTED_4}
            assert not far, far
        else:
            for (question_id, name), value in ours.items():
                if question_id != "all":
                    assert value == pytest.approx(trec_eval_9[question_id][name], abs=1e-12), (question_id, name)
            differ = [key for key, value in printed.items() if key[0] != "all" and abs(ours[key] - value) > PRINTED_4]
            assert differ == [("301", "iprec_at_recall_0.10"), ("302", "iprec_at_recall_0.60"), ("302", "11pt_avg")]


def printed_lines(output: str) -> dict[tuple[str, str], str]:
    """trec_eval's output file (tests/data/trec_eval_10) as {(measure, question or all): value as printed}."""
    theirs = {}
    for line in (TREC_EVAL_TEST / output).read_text().splitlines():
        measure, question_id, value = line.split("\t")
        if measure.strip() not in NOT_MEASURES:
            theirs[(measure.strip(), question_id)] = value
    return theirs


def exported_lines(warehouse: Warehouse, collection_id: str, run_id: str) -> dict[tuple[str, str], str]:
    """`export --format trec`'s lines of the run, as printed_lines reads trec_eval's."""
    with warehouse.connect() as con:
        lines = trec_lines(con, collection_id, run_id, 4)
    return {(measure.strip(), question_id): value for measure, question_id, value in (l.split("\t") for l in lines)}


@pytest.mark.dbt
def test_trec_eval_version_10_keeps_double_scores_as_trec_eval_10(imported: Warehouse) -> None:
    """A run whose scores differ only past a 32-bit float's precision (tests/data/trec_eval_10/make_float_ties.py):
    under trec_eval_version 10 every line of the export is trec_eval 10.0's `-q -c -m all_trec`; under 9, the
    scores tie as trec_eval 9 holds them, every value is pytrec_eval's, and most lines differ from trec_eval 10.0."""
    theirs = printed_lines("out.float_ties.c")
    ten = exported_lines(imported, "float_ties-10", "float_ties")
    differ = {key: (ten.get(key), value) for key, value in theirs.items() if ten.get(key) != value}
    assert not differ, f"{len(differ)} of {len(theirs)} lines differ: {dict(list(differ.items())[:20])}"
    nine = exported_lines(imported, "float_ties-9", "float_ties")
    assert sum(nine.get(key) != value for key, value in theirs.items()) > len(theirs) / 4
    qrels, run = parse_qrels(TREC_EVAL_TEST / "float_ties.qrels"), parse_run(TREC_EVAL_TEST / "float_ties.run")
    measures = {"map", "Rprec", "bpref", "recip_rank", "ndcg", "iprec_at_recall", "P.5,10,30", "ndcg_cut.5,10,30",
                "recall.5,10,30", "success.1,5,10"}
    reference = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    ours = {(question_id, name): value for question_id, name, value in imported.rows(
        "select question_id, measure_name, value from question_measures where collection_id = 'float_ties-9' "
        "and is_averaged")}  # fmt: skip
    checked = 0
    for question_id, values in reference.items():
        for name, value in values.items():
            assert ours[(question_id, name)] == pytest.approx(value, abs=1e-12), (question_id, name)
            checked += 1
    assert checked > 300


@pytest.mark.dbt
@pytest.mark.parametrize("output", list(TREC_EVAL_RUNS))
def test_every_line_of_trec_eval_10_all_trec_is_the_export(imported: Warehouse, output: str) -> None:
    """`retrieval-metrics export --format trec` prints every line trec_eval 10.0's `-q -m all_trec` prints (but
    runid and relstring), as trec_eval prints it: all 34 families, per question and over the run, on a random
    collection with ties, negative grades, unjudged documents and a question missing from the run."""
    theirs = printed_lines(output)
    ours = exported_lines(imported, f"trec_eval_{output.replace('.', '_')}", "random")
    families = {re.sub(r"_[0-9.]+$", "", measure) for measure, _ in theirs}
    assert len(families) == 35 and len({question_id for _, question_id in theirs}) > 10  # 34 and num_q
    # Where trec_eval 10.0 differs from itself, the warehouse keeps one rule (docs/measures.md): under -J, an empty
    # ranking's iprec_at_recall starts from 0 / 0 and prints nan (and so do their means); ours is 0, the value of
    # an empty ranking everywhere else
    undefined = {key for key, value in theirs.items() if value.strip() in ("nan", "-nan")}
    for measure, question_id in sorted(undefined):
        assert measure.startswith("iprec_at_recall_") or measure == "11pt_avg", (measure, question_id)
        if question_id != "all":
            assert (ours[(measure, question_id)], ours[("num_ret", question_id)]) == ("0.0000", "0")
        else:
            values = [0.0 if key in undefined else float(value) for key, value in theirs.items()
                      if key[0] == measure and key[1] != "all"]  # fmt: skip
            assert float(ours[(measure, "all")]) == pytest.approx(sum(values) / len(values), abs=PRINTED_4)
    # ... and -c's num_rel over the run counts every judgment > 0, whatever -l; ours sums the questions' num_rel
    if TREC_EVAL_RUNS[output]["averaging"] == "all_questions" and TREC_EVAL_RUNS[output].get("relevance_level", 1) != 1:
        undefined.add(("num_rel", "all"))
        positive = sum(int(line.split()[3]) > 0 for line in (TREC_EVAL_TEST / "random.qrels").read_text().splitlines())
        assert int(theirs[("num_rel", "all")]) == positive
        assert int(ours[("num_rel", "all")]) == sum(int(ours[key]) for key in theirs if key[0] == "num_rel" and key[1] != "all")
    differ = {key: (ours.get(key), value) for key, value in theirs.items()
              if ours.get(key) != value and key not in undefined}  # fmt: skip
    assert not differ, f"{len(differ)} of {len(theirs)} lines differ: {dict(list(differ.items())[:20])}"


@pytest.mark.dbt
def test_rbp_and_its_residual_equal_what_trec_eval_10_prints(imported: Warehouse) -> None:
    """rbp and rbp_resid (p = 0.9), per question and over the run, as trec_eval 10.0 prints them for its own test
    collection (4 decimals); pytrec_eval's trec_eval has neither."""
    printed = {}
    for line in (TREC_EVAL_TEST / "out.test.aq").read_text().splitlines():
        measure, question_id, value = line.split()
        if measure in ("rbp", "rbp_resid"):
            printed[(question_id, measure)] = float(value)
    ours = {(question_id, name): value for question_id, name, value in imported.rows(
        "select question_id, measure_name, value from question_measures where collection_id = ? "
        "and measure in ('rbp', 'rbp_resid') and is_averaged union all select 'all', measure_name, value "
        "from run_measures where collection_id = ? and measure in ('rbp', 'rbp_resid')",
        ["trec_eval_test-10"] * 2)}  # fmt: skip
    assert set(ours) == set(printed) and len(printed) > 4
    far = {key: (ours[key], value) for key, value in printed.items() if abs(ours[key] - value) > PRINTED_4}
    assert not far, far


def test_trec_eval_rbp_scales_grades_and_counts_the_unjudged_as_trec_eval_10_does() -> None:
    """The reference's transcription of m_rbp.c / m_rbp_resid.c on graded judgments, against trec_eval 10.0
    built from its source (`-q -m rbp -m rbp_resid`, with and without rbp.p=0.5 and -J; 4 decimals)."""
    judgments = {"d1": 3, "d2": 0, "d3": 1, "d5": -1}
    ranking = ["d1", "d4", "d3", "d5"]  # d4 is not in the qrels, d5 is judged -1: both unjudged to rbp_resid
    assert trec_eval_rbp(judgments, ranking, 0.9) == pytest.approx({"rbp": 0.1270, "rbp_resid": 0.8190}, abs=PRINTED_4)
    assert trec_eval_rbp(judgments, ranking, 0.5) == pytest.approx({"rbp": 0.5417, "rbp_resid": 0.3750}, abs=PRINTED_4)
    assert trec_eval_rbp(judgments, ["d1", "d3"], 0.9) == pytest.approx({"rbp": 0.1300, "rbp_resid": 0.0}, abs=PRINTED_4)
    assert trec_eval_rbp({"a": 1, "b": 0}, ["a", "b"], 0.9) == pytest.approx({"rbp": 0.1, "rbp_resid": 0.0})


@pytest.mark.bench
def test_trec_eval_rbp_equals_ranx_on_binary_judgments() -> None:
    """ranx's RBP weights each doc by its raw grade, trec_eval by the grade scaled to [0, 1]: on binary judgments
    (and a doc judged -1, which gains nothing in both) they are one measure."""
    from ranx import Qrels, Run, evaluate

    rng = random.Random(30)
    qrels = {f"q{q}": {f"d{d}": rng.choice([-1, 0, 1, 1]) for d in rng.sample(range(40), 12)} for q in range(25)}
    rankings = {question_id: [f"d{d}" for d in rng.sample(range(40), 20)] for question_id in qrels}
    run = {question_id: {doc_id: -float(rank) for rank, doc_id in enumerate(docs, 1)} for question_id, docs in rankings.items()}
    for p, name in [(0.9, "rbp.9"), (0.5, "rbp.5"), (0.95, "rbp.95")]:
        theirs = evaluate(Qrels(qrels), Run(run), name, return_mean=False, make_comparable=True)
        ours = [trec_eval_rbp(qrels[q], rankings[q], p)["rbp"] for q in sorted(qrels)]
        assert list(theirs) == pytest.approx(ours, abs=1e-12), name


@pytest.mark.dbt
def test_ids_stay_text(imported: Warehouse) -> None:
    ids = {row[0] for row in imported.rows("select distinct question_id from raw.qrels")}
    assert {"7", "07", "007"} <= ids
    docs = {row[0] for row in imported.rows("select distinct doc_id from raw.rankings")}
    assert {"1", "01", "001"} <= docs


# ---------------------------------------------------------------------------------------------------------------
# Fast: the references' behaviour the comparison relies on (no dbt, no warehouse).


def evaluate(qrels: dict, run: dict, measures: set[str], level: int = 1, judged_only: bool = False) -> dict:
    """pytrec_eval's per-question values at relevance level `level`, with -J if judged_only."""
    return pytrec_eval.RelevanceEvaluator(
        qrels, measures, relevance_level=level, judged_docs_only_flag=judged_only
    ).evaluate(run)


def ranked(*doc_ids: str) -> dict[str, float]:
    """A ranking as strictly decreasing scores."""
    return {doc_id: -float(rank) for rank, doc_id in enumerate(doc_ids, start=1)}


def test_gm_map_is_log_of_ap_floored_per_question_and_exp_of_the_mean_over_questions() -> None:
    qrels = {"a": {"r1": 1, "r2": 1}, "b": {"r1": 1}, "c": {"n": 0}}
    run = {"a": ranked("x", "r1"), "b": ranked("x", "y"), "c": ranked("n")}
    values = evaluate(qrels, run, {"map", "gm_map", "num_rel", "num_ret"})
    assert values["a"]["map"] == pytest.approx(0.25)
    assert values["a"]["gm_map"] == pytest.approx(math.log(0.25), abs=1e-15)
    assert values["b"]["gm_map"] == values["c"]["gm_map"] == math.log(MIN_GEO_MEAN)  # AP 0; no relevant doc
    logs = [values[q]["gm_map"] for q in "abc"]
    assert pytrec_eval.compute_aggregated_measure("gm_map", logs) == pytest.approx(math.exp(sum(logs) / 3), rel=1e-15)
    assert pytrec_eval.compute_aggregated_measure("num_ret", [values[q]["num_ret"] for q in "abc"]) == 5
    assert pytrec_eval.compute_aggregated_measure("map", [values[q]["map"] for q in "abc"]) == pytest.approx(0.25 / 3)


def test_ties_are_broken_as_32_bit_floats_by_doc_id_descending() -> None:
    # 0.1 + 1e-10 and 0.1 are one 32-bit float: trec_eval ranks "b" (the greater doc id) first
    run = {"q": {"a": 0.1 + 1e-10, "b": 0.1, "c": 0.05}}
    assert evaluate({"q": {"a": 1}}, run, {"recip_rank"})["q"]["recip_rank"] == 0.5
    assert trec_order(run) == {"q": ["b", "a", "c"]}
    assert trec_order({"q": {"D9": 1.0, "d.9": 1.0, "10": 1.0, "9": 1.0}}) == {"q": ["d.9", "D9", "9", "10"]}
    # ir_measures' judged provider sorts (-score, doc id) as doubles: "a" first, hence -rank as its scores
    metric, = ir_measures.judged.iter_calc([ir_measures.parse_measure("Judged@1")], {"q": {"a": 0}}, run)
    assert metric.value == 1.0


def test_negative_grades_are_judged_not_relevant_but_minus_j_drops_them_and_bpref_ignores_them() -> None:
    qrels = {"q": {"neg1": -1, "neg2": -2, "rel": 1, "zero": 0}}
    run = {"q": ranked("neg1", "x", "rel", "zero", "neg2")}
    measures = {"num_ret", "num_rel", "num_rel_ret", "bpref", "P.1", "recip_rank"}
    values = evaluate(qrels, run, measures)["q"]
    assert (values["num_ret"], values["num_rel"], values["recip_rank"]) == (5, 1, 1 / 3)
    assert values["bpref"] == 1.0  # "neg1" above "rel" is not a judged non-relevant doc (grade 0 would be)
    assert evaluate({"q": {"zero1": 0, "rel": 1}}, {"q": ranked("zero1", "rel")}, {"bpref"})["q"]["bpref"] == 0.0
    condensed = evaluate(qrels, run, measures, judged_only=True)["q"]
    assert (condensed["num_ret"], condensed["recip_rank"], condensed["P_1"]) == (2, 1.0, 1.0)  # "rel", "zero" left
    # a question with only negative grades is still one trec_eval evaluates
    assert evaluate({"q": {"n": -1}}, {"q": ranked("n")}, {"num_ret"})["q"]["num_ret"] == 1


def test_minus_j_still_evaluates_a_question_with_nothing_judged_retrieved() -> None:
    qrels = {"q": {"r": 2, "s": 1}}
    measures = {"num_ret", "num_rel", "gm_map", "map", "iprec_at_recall", "11pt_avg", "P.5"}
    values = evaluate(qrels, {"q": ranked("x", "y")}, measures, 2, True)["q"]
    assert values["num_ret"] == 0 and values["num_rel"] == 1  # -l 2: only "r" is relevant
    assert (values["gm_map"], values["map"], values["P_5"]) == (math.log(MIN_GEO_MEAN), 0, 0)
    # trec_eval's iprec_at_recall starts from num_rel_ret / num_ret, 0 / 0 on the empty condensed ranking, and
    # sets it at the recall levels needing no more relevant docs than retrieved (0 here): the others stay 0
    assert math.isnan(values["iprec_at_recall_0.00"]) and math.isnan(values["11pt_avg"])
    assert all(values[name] == 0 for name in IPREC_AT_RECALL[1:])
    reference = references(qrels, {"q": ranked("x", "y")}, {"q": ["x", "y"]}, [5], Settings(2, True))
    assert all(reference.values["q"][name] == 0 for name in [*IPREC_AT_RECALL, "11pt_avg"])  # as on no ranking


def test_ndcg_ignores_the_relevance_level() -> None:
    qrels = {"q": {"one": 1, "two": 2}}
    run = {"q": ranked("x", "one")}
    level1 = evaluate(qrels, run, {"ndcg", "ndcg_cut.2", "P.2"}, level=1)["q"]
    level2 = evaluate(qrels, run, {"ndcg", "ndcg_cut.2", "P.2"}, level=2)["q"]
    expected = (1 / math.log2(3)) / (2 + 1 / math.log2(3))  # the grade is the gain, whatever the level
    assert level1["ndcg"] == level2["ndcg"] == pytest.approx(expected, abs=1e-12)
    assert level1["ndcg_cut_2"] == level2["ndcg_cut_2"] == pytest.approx(expected, abs=1e-12)
    assert (level1["P_2"], level2["P_2"]) == (0.5, 0.0)


def iprec_v9(relevant: list[bool], num_rel: int) -> list[float]:
    """trec_eval v9's interpolated precision at recall 0.0 .. 1.0: the best precision at a rank with at least
    (long)(recall * num_rel + 0.9) relevant docs so far."""
    values = []
    for level in range(11):
        needed = int(level / 10 * num_rel + 0.9)
        so_far, best = 0, 0.0
        for rank, is_relevant in enumerate(relevant, start=1):
            so_far += is_relevant
            if so_far >= needed:
                best = max(best, so_far / rank)
        values.append(best)
    return values


def test_iprec_at_recall_needs_long_of_recall_times_num_rel_plus_0_9_relevant_docs() -> None:
    qrels = {"q": {"r1": 1, "r2": 1, "r3": 1}}
    run = {"q": ranked("r1", "x1", "r2", "x2", "x3", "x4", "r3")}
    values = evaluate(qrels, run, {"iprec_at_recall", "11pt_avg"})["q"]
    # 0.7 * 3 + 0.9 is 2.9999999999999996 as a double: 2 relevant docs (ceil(2.1) would need 3: 3/7)
    assert values["iprec_at_recall_0.70"] == pytest.approx(2 / 3)
    # 0.4 * 3 + 0.9 = 2.1: 2 relevant docs (lround(1.2) would need 1: 1.0)
    assert values["iprec_at_recall_0.40"] == pytest.approx(2 / 3)
    assert values["iprec_at_recall_0.80"] == pytest.approx(3 / 7)
    assert values["11pt_avg"] == pytest.approx(sum(values[name] for name in IPREC_AT_RECALL) / 11, abs=1e-15)
    rng = random.Random(7)
    for _ in range(300):
        docs = [f"d{i}" for i in range(rng.randint(1, 30))]
        judgments = {doc_id: rng.choice([0, 1, 1, 2]) for doc_id in rng.sample(docs, rng.randint(1, len(docs)))}
        ranking = rng.sample(docs, rng.randint(1, len(docs)))
        values = evaluate({"q": judgments}, {"q": ranked(*ranking)}, {"iprec_at_recall"})["q"]
        expected = iprec_v9([judgments.get(d, 0) >= 1 for d in ranking], sum(g >= 1 for g in judgments.values()))
        assert [values[name] for name in IPREC_AT_RECALL] == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize("max_grade", [4, 5])
def test_gdeval_full_precision_is_gdeval_printed_to_5_decimals(max_grade: int) -> None:
    qrels = {"1": {"a": 3, "b": 1, "c": 0, "d": 2, "n": -1}, "2": {"z": 0}, "3": {"a": 4}}
    run = {"1": ranked("b", "x", "a", "n"), "2": ranked("z"), "4": ranked("a")}
    measures = [ir_measures.parse_measure(name) for name in ["ERR@3", "nDCG(dcg='exp-log2')@3", "ERR@1"]]

    def values(full_precision: bool) -> dict[tuple[str, str], float]:
        with gdeval_script(full_precision, max_grade):
            return {(m.query_id, str(m.measure)): m.value for m in ir_measures.gdeval.iter_calc(measures, qrels, run)}

    full, printed = values(True), values(False)
    assert set(full) == set(printed) == {(q, str(m)) for q in qrels for m in measures}
    # gdeval prints topics with a grade > 0 that the run has; ir_measures gives the other qrels topics 0
    assert all(full[(q, str(m))] == printed[(q, str(m))] == 0 for q in ("2", "3") for m in measures)
    r = {grade: (2**grade - 1) / 2**max_grade for grade in range(5)}  # gains b 1, x 0, a 3
    err = r[1] + (1 - r[1]) * (1 - r[0]) * r[3] / 3
    ndcg = (1 + 7 / math.log2(4)) / (7 + 3 / math.log2(3) + 1 / math.log2(4))
    assert full[("1", "ERR@3")] == pytest.approx(err, abs=1e-15)
    assert full[("1", "ERR@1")] == pytest.approx(r[1], abs=1e-15)
    assert full[("1", "nDCG(dcg='exp-log2')@3")] == pytest.approx(ndcg, abs=1e-15)
    for key, value in full.items():
        assert abs(value - printed[key]) <= PRINTED_PRECISION
    assert printed[("1", "ERR@3")] == round(err, 5) != err


def test_gdeval_needs_numeric_topics_and_grades_up_to_its_maximum() -> None:
    measure = [ir_measures.parse_measure("ERR@3")]
    with pytest.raises(subprocess.CalledProcessError):
        list(ir_measures.gdeval.iter_calc(measure, {"q": {"a": 1}}, {"q": ranked("a")}))
    with pytest.raises(subprocess.CalledProcessError):
        list(ir_measures.gdeval.iter_calc(measure, {"1": {"a": 5}}, {"1": ranked("a")}))
    # "x-1" and "y-1" are both topic 1 to gdeval: hence the question ids as integers
    metrics = ir_measures.gdeval.iter_calc(measure, {"x-1": {"a": 1}}, {"y-1": ranked("a")})
    values = {metric.query_id: metric.value for metric in metrics}
    assert values == {"1": 1 / 16, "x-1": 0}


def test_judged_counts_any_qrels_entry_and_divides_by_min_of_k_and_the_ranking() -> None:
    qrels = {"q": {"neg": -1, "zero": 0, "rel": 2}, "none": {"a": 1}}
    run = {"q": ranked("neg", "x", "zero"), "only_run": ranked("a")}
    measures = [ir_measures.parse_measure(f"Judged@{k}") for k in (1, 2, 3, 10)]
    values = {(m.query_id, str(m.measure)): m.value for m in ir_measures.judged.iter_calc(measures, qrels, run)}
    assert values == {
        ("q", "Judged@1"): 1.0, ("q", "Judged@2"): 0.5, ("q", "Judged@3"): 2 / 3, ("q", "Judged@10"): 2 / 3,
        **{("none", str(m)): 0 for m in measures},  # a qrels question not in the run: 0
    }  # fmt: skip


def test_references_of_a_hand_made_collection() -> None:
    """The values on an empty ranking, -J's condensed ranking for ir_measures, and the averaged questions."""
    qrels = {"q1": {"a": 2, "b": -1, "c": 1}, "q2": {"a": 1, "b": 3}, "q3": {"z": 0}}
    run = {"q1": ranked("b", "x", "a"), "q3": ranked("x"), "only_run": ranked("a")}
    rankings = trec_order(run)
    settings = Settings(relevance_level=2, judged_docs_only=True, averaging="retrieved_only")
    reference = references(qrels, run, rankings, [1, 2], settings, questions={"q4"})
    assert set(reference.values) == {"q1", "q2", "q3", "q4"} and reference.averaged == {"q1", "q3"}
    missing = reference.values["q2"]  # not retrieved: the empty ranking
    assert missing["num_rel"] == 1 and missing["gm_map"] == missing["gm_bpref"] == math.log(MIN_GEO_MEAN)
    assert all(value == 0 for name, value in missing.items() if name not in {"num_rel", "gm_map", "gm_bpref"})
    q1 = reference.values["q1"]  # condensed to "a": the top
    assert (q1["num_ret"], q1["P_1"], q1["Judged@2"], q1["ERR@1"]) == (1, 1.0, 1.0, 3 / 16)
    assert q1["nDCG(dcg='exp-log2')@2"] == pytest.approx(3 / (3 + 1 / math.log2(3)), abs=1e-15)
    assert reference.values["q3"]["Judged@1"] == 0  # nothing judged retrieved: ir_measures gets no ranking
    assert reference.aggregate("num_rel") == 1 and reference.aggregate("P_1") == 0.5
    everything = references(qrels, run, rankings, [1, 2], Settings(), questions={"q4"})
    assert everything.averaged == {"q1", "q2", "q3", "q4"}
    assert everything.values["q1"]["Judged@2"] == 0.5 and everything.values["q1"]["P_1"] == 0  # "b" counts
    assert ir_measures_reference(qrels, rankings, [1], Settings())["q1"]["ERR@1"] == 0  # "b": grade -1, no gain
