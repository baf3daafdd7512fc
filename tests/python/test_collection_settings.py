"""Settings per collection (retrieval_metrics/per_collection.py, int_collection_settings): one warehouse
holds Docent on its seed's lesson preset (k = 1, 2, 3, baseline keyword_overlap, its golden tests green) and an
imported collection on the trec-dl-passage preset (k = 10, 100, 1000, relevance level 2) with baseline run0, built
together in one build; its values equal pytrec_eval's under its settings, the scorecard leads with its headline;
a changed setting recomputes that collection's runs only; bad settings are refused
in one line, exit 2, nothing changed. Both collections have question tags (Docent's seed, gen's `import --tags`):
their per-tag means, intervals and comparisons equal a direct computation, and the report shows them."""

from __future__ import annotations

import csv
import json
import math
import random
import re
from pathlib import Path

import duckdb
import numpy as np
import pytest
import pytrec_eval
from scipy import stats

import retrieval_metrics as rm
from conftest import Warehouse, warehouse_checksums
from retrieval_metrics.building import add_missing_raw_tables
from retrieval_metrics.collections import seed_file
from retrieval_metrics.per_collection import seed_settings, values_of
from retrieval_metrics.presets import PRESETS
from retrieval_metrics.report import report
from retrieval_metrics.scorecard import scorecard, with_interval
from retrieval_metrics.settings import check_vars
from retrieval_metrics.stats import BATCH_VALUES
from retrieval_metrics.warehouse import InputError
from test_lesson_scorecard import LESSON_SCORECARD
from test_trec_agreement import make_collection, parse_qrels, parse_run

pytestmark = pytest.mark.dbt

GEN_KS = [10, 100, 1000]


def gen_tags(qrels: Path) -> dict[str, set[str]]:
    """Tags for gen's judged questions: a few that overlap, one on a single question (no interval), and the
    awkward ids ("7", "07", "007": nothing relevant at some level) in a tag of their own."""
    questions = list(dict.fromkeys(line.split()[0] for line in qrels.read_text().splitlines()))
    tags: dict[str, set[str]] = {}
    for position, question in enumerate(questions):
        tags.setdefault("head" if position < 12 else "tail", set()).add(question)
        if position % 3 == 0:
            tags.setdefault("every-third", set()).add(question)
    tags["awkward"] = {"7", "07", "007"}
    tags["single"] = {questions[5]}
    return tags


def write_tags(tags: dict[str, set[str]], path: Path) -> Path:
    path.write_text("# question tag\n" + "".join(f"{q}\t{tag}\n" for tag in sorted(tags) for q in sorted(tags[tag])))
    return path


@pytest.fixture(scope="module")
def two_collections(lesson: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> tuple[Warehouse, Path, list[Path]]:
    """The lesson's warehouse plus collection gen (two runs) on its own settings, built by the command (every
    test, the lesson's golden values included)."""
    folder = tmp_path_factory.mktemp("collection-settings")
    qrels, runs = make_collection(random.Random(25), folder / "gen", n_runs=2)
    warehouse = lesson.copy(folder / "warehouse")
    tags = write_tags(gen_tags(qrels), folder / "tags.tsv")
    for number, run in enumerate(runs):
        judgments = ["--qrels", str(qrels), "--tags", str(tags)] if number == 0 else []
        imported = warehouse.cli(
            "import", "--collection", "gen", *judgments, "--run", str(run), "--run-id", f"run{number}"
        )
        assert imported.returncode == 0, imported.stderr
    given = warehouse.cli("settings", "--collection", "gen", "--preset", "trec-dl-passage", "--set", "baseline_run_id=run0",
                          "--set", "bootstrap_resamples=500")  # fmt: skip
    assert given.returncode == 0, given.stderr
    assert given.stdout.strip() == (
        "retrieval-metrics settings: collection gen: preset trec-dl-passage (set here); k_values 10, 100, 1000 "
        "(set here); averaging all_questions (set here); relevance_level 2 (set here); judged_docs_only false "
        "(set here); ignore_identical_ids false (set here); max_docs_per_question none (set here); trec_eval_version "
        "9 (set here); err_max_grade 4 (the var's); rbp_persistence 0.9 (the var's); qrels_version latest (the "
        "var's); bootstrap_resamples 500 (set here); bootstrap_seed 20261203 (the var's); baseline_run_id run0 (set "
        "here); alpha 0.05 (the var's); power 0.8 (the var's); target_differences 0.02, 0.05, 0.1 (the var's); hsd_permutations "
        "1000 (the var's); gated_run_ids none (not gated); gated_measures none (not gated); gate_tolerance none (not "
        "gated); min_judge_kappa none (the var's); tie_rule trec_eval (set here); measures none (the default); "
        "user_measures none (the default)"
    )
    built = warehouse.cli("build")
    assert built.returncode == 0, built.stdout + built.stderr
    return warehouse, qrels, runs


def test_each_collection_is_built_at_its_own_cutoffs_against_its_own_baseline(two_collections) -> None:
    warehouse, _, _ = two_collections
    assert warehouse.rows("select collection_id, list(distinct k order by k) from run_metrics group by all order by 1") == [
        ("docent", [1, 2, 3]), ("gen", GEN_KS)]  # fmt: skip
    assert warehouse.rows(
        "select distinct collection_id, run_id, baseline_run_id from question_comparisons order by all"
    ) == [("gen", "run1", "run0")]  # docent has one run: its baseline
    assert warehouse.rows(
        "select collection_id, run_id, run_position, baseline_run_id from run_leaderboard where k in (2, 10) order by all"
    ) == [("docent", "keyword_overlap", 1, "keyword_overlap"), ("gen", "run0", 1, "run0"), ("gen", "run1", 2, "run0")]
    assert dict(warehouse.rows("select distinct collection_id, evaluation_settings from run_measures")) == {
        "docent": '{"averaging": "all_questions", "err_max_grade": 4, "ignore_identical_ids": false, '
                  '"judged_docs_only": false, "k_values": [1, 2, 3], "max_docs_per_question": null, '
                  '"preset": "lesson", "qrels_version": 0, "rbp_persistence": 0.9, "relevance_level": 1, '
                  '"trec_eval_version": 9}',
        "gen": '{"averaging": "all_questions", "err_max_grade": 4, "ignore_identical_ids": false, '
               '"judged_docs_only": false, "k_values": [10, 100, 1000], "max_docs_per_question": null, '
               '"preset": "trec-dl-passage", "qrels_version": 0, "rbp_persistence": 0.9, "relevance_level": 2, '
               '"trec_eval_version": 9}',
    }  # fmt: skip
    assert warehouse.rows("select collection_id, setting, list(value order by value), any_value(set_by) "
                          "from intermediate.int_collection_settings group by all order by all") == sorted([
        ("docent", "alpha", ["0.05"], "var"), ("docent", "hsd_permutations", ["1000"], "var"), ("docent", "power", ["0.8"], "var"),
        ("docent", "target_differences", ["0.02", "0.05", "0.1"], "var"),
        ("docent", "averaging", ["all_questions"], "seed"), ("docent", "baseline_run_id", ["keyword_overlap"], "seed"),
        ("docent", "bootstrap_resamples", ["1000"], "var"), ("docent", "bootstrap_seed", ["20261203"], "var"),
        ("docent", "err_max_grade", ["4"], "seed"),
        ("docent", "gated_measures", ["ndcg_cut_2", "recall_2"], "var"),
        ("docent", "gated_run_ids", ["bm25", "keyword_normalized"], "var"), ("docent", "gate_tolerance", ["0.0"], "var"),
        ("docent", "ignore_identical_ids", ["false"], "seed"),
        ("docent", "judged_docs_only", ["false"], "seed"),
        ("docent", "k_values", ["1", "2", "3"], "seed"), ("docent", "max_docs_per_question", ["none"], "var"),
        ("docent", "min_judge_kappa", ["none"], "var"),
        ("docent", "preset", ["lesson"], "seed"),
        ("docent", "qrels_version", ["latest"], "var"),
        ("docent", "rbp_persistence", ["0.9"], "var"), ("docent", "relevance_level", ["1"], "seed"),
        ("docent", "tie_rule", ["doc_order"], "seed"), ("docent", "trec_eval_version", ["9"], "seed"),
        ("gen", "alpha", ["0.05"], "var"), ("gen", "hsd_permutations", ["1000"], "var"), ("gen", "power", ["0.8"], "var"),
        ("gen", "target_differences", ["0.02", "0.05", "0.1"], "var"),
        ("gen", "averaging", ["all_questions"], "warehouse"), ("gen", "baseline_run_id", ["run0"], "warehouse"),
        ("gen", "bootstrap_resamples", ["500"], "warehouse"), ("gen", "bootstrap_seed", ["20261203"], "var"),
        ("gen", "err_max_grade", ["4"], "var"), ("gen", "ignore_identical_ids", ["false"], "warehouse"),
        ("gen", "judged_docs_only", ["false"], "warehouse"),
        ("gen", "k_values", ["10", "100", "1000"], "warehouse"), ("gen", "max_docs_per_question", ["none"], "warehouse"),
        ("gen", "min_judge_kappa", ["none"], "var"), ("gen", "preset", ["trec-dl-passage"], "warehouse"),
        ("gen", "qrels_version", ["latest"], "var"),
        ("gen", "rbp_persistence", ["0.9"], "var"), ("gen", "relevance_level", ["2"], "warehouse"),
        ("gen", "tie_rule", ["trec_eval"], "warehouse"), ("gen", "trec_eval_version", ["9"], "warehouse"),
    ])  # fmt: skip


def test_the_values_under_the_collections_settings_equal_pytrec_eval(two_collections) -> None:
    """Each question's values at gen's cutoffs and relevance level, and each run's mean over every question of
    the qrels (trec_eval -c: a question the run lacks counts 0), as anserini reports TREC DL."""
    warehouse, qrels_path, runs = two_collections
    names = [f"{measure}_{k}" for measure in ("P", "recall", "ndcg_cut", "success") for k in GEN_KS] + ["map"]
    cutoffs = ",".join(map(str, GEN_KS))
    measures = {f"{measure}.{cutoffs}" for measure in ("P", "recall", "ndcg_cut", "success")} | {"map"}
    qrels = parse_qrels(qrels_path)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=2)
    checked = 0
    for number, run in enumerate(runs):
        reference = evaluator.evaluate(parse_run(run))
        means = dict(warehouse.rows(
            "select measure_name, value from run_measures where collection_id = 'gen' and run_id = ?", [f"run{number}"]))
        for name in names:
            expected = sum(reference.get(question, {}).get(name, 0.0) for question in qrels) / len(qrels)
            assert means[name] == pytest.approx(expected, abs=1e-12), (number, name)
        ours = {(question, name): value for question, name, value in warehouse.rows(
            "select question_id, measure_name, value from question_measures "
            "where collection_id = 'gen' and run_id = ? and measure_name in (select unnest(?))",
            [f"run{number}", names])}  # fmt: skip
        for question, values in reference.items():
            for name in names:
                assert ours[(question, name)] == pytest.approx(values[name], abs=1e-12), (number, question, name)
                checked += 1
    assert checked > 300


def test_the_scorecard_leads_each_run_with_its_presets_headline(two_collections) -> None:
    """gen's runs lead with trec-dl-passage's nDCG@10, MAP and R@1000, the last two named with their relevance
    level, and so are its Recall, Precision and MRR in the lesson's table and the report (NDCG is not: the level
    does not change it); Docent's block is the lesson's table, unchanged."""
    warehouse = two_collections[0]
    with warehouse.connect() as con:
        lines = scorecard(con).splitlines()
        means = {(run, name): with_interval(value, low, high) for run, name, value, low, high in con.execute(
            "select run_id, measure_name, value, ci_low, ci_high from run_measures where collection_id = 'gen'"
        ).fetchall()}  # fmt: skip
    assert dict(warehouse.rows(
        "select measure_name, measure_label from run_measures where collection_id = 'gen' and run_id = 'run0' "
        "and measure_name in ('ndcg_cut_10', 'map', 'recall_1000', 'bpref', 'ERR@10', 'num_ret')")) == {
        "ndcg_cut_10": "ndcg_cut_10", "map": "map(rel=2)", "recall_1000": "recall_1000(rel=2)",
        "bpref": "bpref(rel=2)", "ERR@10": "ERR@10", "num_ret": "num_ret"}  # fmt: skip
    assert warehouse.rows("select count(*) from run_measures where collection_id = 'docent' "
                          "and measure_label <> measure_name") == [(0,)]  # level 1: the names as they are
    for run in ("run0", "run1"):
        title = next(i for i, line in enumerate(lines) if line.startswith(f"gen / {run} "))
        assert lines[title + 1] == (
            f"headline (trec-dl-passage): ndcg_cut_10={means[(run, 'ndcg_cut_10')]}   "
            f"map(rel=2)={means[(run, 'map')]}   recall_1000(rel=2)={means[(run, 'recall_1000')]}"
        )
        assert lines[title + 2].split() == ["k=10", f"Recall(rel=2)@10={means[(run, 'recall_10')].split()[0]}",
                                            *means[(run, "recall_10")].split()[1:],
                                            f"Precision(rel=2)@10={means[(run, 'P_10')].split()[0]}",
                                            *means[(run, "P_10")].split()[1:],
                                            f"NDCG@10={means[(run, 'ndcg_cut_10')].split()[0]}",
                                            *means[(run, "ndcg_cut_10")].split()[1:]]
        assert lines[title + 5] == f"MRR(rel=2) (rank-independent) = {means[(run, 'recip_rank')]}"
    docent = lines.index("docent / keyword_overlap  (retriever keyword_overlap, 9 questions)")
    assert lines[docent : docent + 5] == LESSON_SCORECARD.splitlines()

    with warehouse.connect() as con:  # the report: gen's section opens with the same headline, Docent's has none
        page, _ = report(con, "warehouse", "now")
    docent_section, gen_section = page[page.index('id="collection-docent"'):].split('id="collection-gen"')
    assert "Headline" not in docent_section
    assert gen_section.index("<h3>Headline (trec-dl-passage preset)</h3>") < gen_section.index("Leaderboard at each k")
    assert "<th>map(rel=2)</th>" in gen_section and 'class="headline" data-run="run1"' in gen_section
    for label in ("Recall(rel=2)@10", "Precision(rel=2)@1000", "MRR(rel=2)", "MAP(rel=2)", "R-precision(rel=2)",
                  "Hit(rel=2)@100", "NDCG@10", "Judged@10"):
        assert f"<th>{label}</th>" in gen_section, label
    assert "<th>Recall@" not in gen_section and "<th>Recall(rel" not in docent_section


def test_a_changed_setting_recomputes_that_collection_only(two_collections, tmp_path: Path) -> None:
    warehouse = two_collections[0].copy(tmp_path)
    docent_before = warehouse.rows("select * from question_measures where collection_id = 'docent' order by all")
    assert warehouse.cli("settings", "--collection", "gen", "--set", "k_values=[10, 20]").returncode == 0
    built = warehouse.cli("build")
    assert built.returncode == 0, built.stdout + built.stderr
    assert warehouse.rows(
        "select distinct collection_id, run_id from question_measures "
        "where computed_at = (select max(computed_at) from run_means_by_qrels_version) order by all"
    ) == [("gen", "run0"), ("gen", "run1")]
    assert warehouse.rows("select distinct k from run_metrics where collection_id = 'gen' order by k") == [(10,), (20,)]
    assert (
        warehouse.rows("select * from question_measures where collection_id = 'docent' order by all") == docent_before
    )

    # unset: the var's default again (k = 1, 3, 5, 10, 100), through the notebook's call; Docent keeps its seed's
    line = rm.collection_settings("gen", database=warehouse.db_path, k_values=None, relevance_level=None)
    assert line == (  # the preset is kept with what no longer follows it
        "collection gen: preset trec-dl-passage (overridden: k_values, relevance_level) (set here); k_values 1, 3, "
        "5, 10, 100 (the var's); averaging all_questions (set here); relevance_level 1 (the var's); judged_docs_only "
        "false (set here); ignore_identical_ids false (set here); max_docs_per_question none (set here); "
        "trec_eval_version 9 (set here); err_max_grade 4 (the var's); rbp_persistence 0.9 (the var's); "
        "qrels_version latest (the var's); bootstrap_resamples 500 (set here); bootstrap_seed 20261203 (the var's); "
        "baseline_run_id run0 (set here); alpha 0.05 (the var's); power 0.8 (the var's); target_differences 0.02, 0.05, 0.1 (the var's); hsd_permutations "
        "1000 (the var's); gated_run_ids none (not gated); gated_measures none (not gated); gate_tolerance none (not "
        "gated); min_judge_kappa none (the var's); tie_rule trec_eval (set here); measures none (the default); "
        "user_measures none (the default)"
    )
    assert rm.collection_settings("docent", database=warehouse.db_path) == (
        "collection docent: preset lesson (the seed's); k_values 1, 2, 3 (the seed's); averaging all_questions (the "
        "seed's); relevance_level 1 (the seed's); judged_docs_only false (the seed's); ignore_identical_ids false "
        "(the seed's); max_docs_per_question none (the var's); trec_eval_version 9 (the seed's); err_max_grade 4 "
        "(the seed's); rbp_persistence 0.9 (the var's); qrels_version latest (the var's); bootstrap_resamples 1000 "
        "(the var's); bootstrap_seed 20261203 (the var's); baseline_run_id keyword_overlap (the seed's); "
        "alpha 0.05 (the var's); power 0.8 (the var's); target_differences 0.02, 0.05, 0.1 (the var's); hsd_permutations "
        "1000 (the var's); "
        "gated_run_ids bm25, keyword_normalized (the var's); gated_measures ndcg_cut_2, recall_2 (the var's); "
        "gate_tolerance 0.0 (the var's); min_judge_kappa none (the var's); tie_rule doc_order (the seed's); measures none (the default); user_measures none (the default)"
    )


def test_the_dbt_var_is_the_default_only_for_collections_without_their_own(two_collections, tmp_path: Path) -> None:
    warehouse = two_collections[0].copy(tmp_path)
    own = ["preset", "k_values", "relevance_level", "averaging", "judged_docs_only"]
    unset = warehouse.cli("settings", "--collection", "gen", *[arg for name in own for arg in ("--unset", name)])
    assert unset.returncode == 0, unset.stderr
    # the lesson's golden tests run too: Docent keeps its seed's settings (the lesson's)
    warehouse.build("--vars", "{k_values: [4, 8], relevance_level: 3, judged_docs_only: true, "
                    "averaging: retrieved_only}")
    assert dict(warehouse.rows("select distinct collection_id, evaluation_settings from run_measures")) == {
        "docent": '{"averaging": "all_questions", "err_max_grade": 4, "ignore_identical_ids": false, '
                  '"judged_docs_only": false, "k_values": [1, 2, 3], "max_docs_per_question": null, '
                  '"preset": "lesson", "qrels_version": 0, "rbp_persistence": 0.9, "relevance_level": 1, '
                  '"trec_eval_version": 9}',
        "gen": '{"averaging": "retrieved_only", "err_max_grade": 4, "ignore_identical_ids": false, '
               '"judged_docs_only": true, "k_values": [4, 8], "max_docs_per_question": null, "preset": null, '
               '"qrels_version": 0, "rbp_persistence": 0.9, "relevance_level": 3, "trec_eval_version": 9}',
    }  # fmt: skip


def test_an_overridden_preset_and_a_setting_stored_under_its_old_name(two_collections, tmp_path: Path) -> None:
    """A row stored as iprec_rule (an older warehouse's) is read as trec_eval_version, by the command and the
    build; settings set otherwise than gen's preset are recorded beside its name, stored, listed and built into
    run_measures; set back, the preset is plain again, and the version's change re-ranks the runs."""
    warehouse = two_collections[0].copy(tmp_path)
    with duckdb.connect(str(warehouse.db_path)) as con:
        con.execute("delete from raw.collection_settings where collection_id = 'gen' and setting = 'trec_eval_version'")
        con.execute("insert into raw.collection_settings values ('gen', 'iprec_rule', 'trec_eval_10')")
    changed = warehouse.cli("settings", "--collection", "gen", "--set", "relevance_level=1")
    assert changed.returncode == 0, changed.stderr
    overridden = "trec-dl-passage (overridden: relevance_level, trec_eval_version)"
    assert f"preset {overridden} (set here)" in changed.stdout and "trec_eval_version 10 (set here)" in changed.stdout
    assert warehouse.rows("select value from raw.collection_settings where collection_id = 'gen' "
                          "and setting = 'preset'") == [(overridden,)]  # fmt: skip
    assert overridden in warehouse.cli("list").stdout
    built = warehouse.cli("build")
    assert built.returncode == 0, built.stdout + built.stderr
    assert warehouse.rows("select preset, trec_eval_version, iprec_rule from intermediate.int_collection_evaluation_settings "
                          "where collection_id = 'gen'") == [(overridden, 10, "trec_eval_10")]  # fmt: skip
    assert {json.loads(settings)["preset"] for (settings,) in warehouse.rows(
        "select distinct evaluation_settings from run_measures where collection_id = 'gen'")} == {overridden}  # fmt: skip
    with warehouse.connect() as con:
        assert f"headline ({overridden}): ndcg_cut_10=" in scorecard(con)
    back = warehouse.cli("settings", "--collection", "gen", "--set", "relevance_level=2", "--set", "trec_eval_version=9")
    assert back.returncode == 0, back.stderr
    assert "preset trec-dl-passage (set here)" in back.stdout
    assert "re-ranked 2 run(s) of gen from their stored scores by tie_rule trec_eval (trec_eval_version 9)" in back.stdout
    assert warehouse.rows("select setting, value from raw.collection_settings where collection_id = 'gen' "
                          "and setting in ('iprec_rule', 'trec_eval_version')") == [("trec_eval_version", "9")]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--collection", "gen", "--set", "k_values=0"], "collection 'gen': setting k_values: '0' holds '0', not a positive integer"),
        (["--collection", "gen", "--set", "k_values=5,99999999999999999999"],
         "collection 'gen': setting k_values: '5,99999999999999999999' holds 99999999999999999999, more than 2147483647"),
        (["--collection", "gen", "--set", "k_values=5,x"], "collection 'gen': setting k_values: '5,x' holds 'x', not a positive integer"),
        (["--collection", "gen", "--set", "baseline_run_id=nope"],
         "collection 'gen': setting baseline_run_id: 'nope' is not a run of the collection (its runs: run0, run1)"),
        (["--collection", "gen", "--set", "baseline_run_id=run0,nope"],
         "collection 'gen': setting baseline_run_id: 'nope' is not a run of the collection (its runs: run0, run1)"),
        (["--collection", "gen", "--set", "baseline_run_id=run1,run0,run1"],
         "collection 'gen': setting baseline_run_id: 'run1,run0,run1' names run1 twice"),
        (["--collection", "gen", "--set", "baseline_run_id=run0,none"],
         "collection 'gen': setting baseline_run_id: 'run0,none' is not none or a list of run ids"),
        (["--collection", "gen", "--set", "relevance=2"],
         "collection 'gen': no setting 'relevance' (a collection's own settings: preset, k_values, averaging, "
         "relevance_level, judged_docs_only, ignore_identical_ids, max_docs_per_question, trec_eval_version, "
         "err_max_grade, rbp_persistence, qrels_version, bootstrap_resamples, bootstrap_seed, baseline_run_id, "
         "alpha, power, target_differences, hsd_permutations, gated_run_ids, gated_measures, gate_tolerance, "
         "min_judge_kappa, "
         "tie_rule, measures, user_measures)"),
        (["--collection", "gen", "--preset", "trec-dk"],
         "collection 'gen': setting preset: 'trec-dk' is not one of lesson, trec-dl-passage, trec-dl-doc, trec-adhoc, "
         "msmarco-passage, beir, trec-rag"),
        (["--collection", "gen", "--set", "iprec_rule=trec_eval_10"],
         "collection 'gen': setting iprec_rule is now trec_eval_version (trec_eval_9 is 9, trec_eval_10 is 10)"),
        (["--collection", "gen", "--unset", "iprec_rule"],
         "collection 'gen': setting iprec_rule is now trec_eval_version (trec_eval_9 is 9, trec_eval_10 is 10)"),
        (["--collection", "gen", "--set", "trec_eval_version=11"],
         "collection 'gen': setting trec_eval_version: '11' is not one of 9, 10"),
        (["--collection", "gen", "--set", "relevance_level=-1"],
         "collection 'gen': setting relevance_level: '-1' is not an integer >= 0"),
        (["--collection", "gen", "--set", "averaging=mean"],
         "collection 'gen': setting averaging: 'mean' is not one of all_questions, retrieved_only"),
        (["--collection", "gen", "--set", "judged_docs_only=yes"],
         "collection 'gen': setting judged_docs_only: 'yes' is not true or false"),
        (["--collection", "gen", "--set", "err_max_grade=0"],
         "collection 'gen': setting err_max_grade: '0' is not an integer >= 1"),
        (["--collection", "gen", "--set", "max_docs_per_question=0"],
         "collection 'gen': setting max_docs_per_question: '0' is not none or an integer from 1 to 2147483647"),
        (["--collection", "gen", "--set", "rbp_persistence=1"],
         "collection 'gen': setting rbp_persistence: '1' is not a number between 0 and 1 (exclusive)"),
        (["--collection", "gen", "--set", "k_values"], "--set 'k_values' is not NAME=VALUE, e.g. --set k_values=10,100"),
        (["--collection", "gen", "--set", "k_values=5", "--unset", "k_values"], "collection 'gen': setting k_values both set and unset"),
        (["--collection", "gen", "--set", "gated_run_ids=run1,nope"],
         "collection 'gen': setting gated_run_ids: 'nope' is not a run of the collection (its runs: run0, run1)"),
        (["--collection", "gen", "--set", "gated_measures=ndcg cut"],
         "collection 'gen': setting gated_measures: 'ndcg cut' holds 'ndcg cut', not a measure name (as run_measures "
         "names it: ndcg_cut_10, map)"),
        (["--collection", "gen", "--set", "bootstrap_resamples=0"],
         "collection 'gen': setting bootstrap_resamples: '0' is not an integer >= 1"),
        (["--collection", "gen", "--set", "bootstrap_seed=99999999999999999999"],  # more than its bigint column
         "collection 'gen': setting bootstrap_seed: '99999999999999999999' is more than 9223372036854775807"),
        (["--collection", "gen", "--set", "relevance_level=4294967296"],
         "collection 'gen': setting relevance_level: '4294967296' is more than 2147483647"),
        (["--collection", "elsewhere", "--set", "k_values=5"],
         "collection 'elsewhere' has no judgments yet: import --qrels (or --beir) first; the warehouse's "
         "collections: docent, gen"),
    ],
)  # fmt: skip
def test_bad_settings_are_refused_in_one_line_and_change_nothing(two_collections, args, message) -> None:
    warehouse = two_collections[0]
    before = warehouse_checksums(warehouse.db_path)
    refused = warehouse.cli("settings", *args)
    assert refused.returncode == 2
    assert refused.stderr.strip() == f"retrieval-metrics settings: error: {message}"
    assert warehouse_checksums(warehouse.db_path) == before


def test_removing_a_collection_removes_its_settings(two_collections, tmp_path: Path) -> None:
    warehouse = two_collections[0].copy(tmp_path)
    assert warehouse.cli("remove", "--collection", "gen", "--all", "--yes").returncode == 0
    assert warehouse.rows("select count(*) from raw.collection_settings where collection_id = 'gen'") == [(0,)]


def test_a_warehouse_written_before_the_settings_table_gets_it_at_its_next_build(
    lesson: Warehouse, tmp_path: Path
) -> None:
    warehouse = lesson.copy(tmp_path)
    with duckdb.connect(str(warehouse.db_path)) as con:
        con.execute("drop table raw.collection_settings")
    add_missing_raw_tables(warehouse.db_path)  # what build_database does first
    assert warehouse.rows("select count(*) from raw.collection_settings") == [(0,)]
    bytes_before = warehouse.db_path.read_bytes()
    add_missing_raw_tables(warehouse.db_path)  # nothing missing: the file is not written
    assert warehouse.db_path.read_bytes() == bytes_before


def test_docents_seed_settings_are_the_lesson_preset() -> None:
    """The lesson's settings are written twice, as Docent's seed rows (for dbt) and as the lesson preset (for
    `settings --preset`): they must not drift apart."""
    lesson = PRESETS["lesson"].settings
    seeded = seed_settings("docent")
    assert seeded.pop("preset") == ["lesson"] and seeded.pop("baseline_run_id") == ["keyword_overlap"]
    assert seeded == {name: values_of(name, value) for name, value in lesson.items()}


def expected_tags(qrels: Path) -> dict[tuple[str, str], set[str]]:
    """(collection, tag) -> its questions, from the files: Docent's seed and gen's tags."""
    found: dict[tuple[str, str], set[str]] = {}
    with seed_file("golden_question_tags").open(newline="") as handle:
        for row in csv.DictReader(handle):
            found.setdefault(("docent", row["tag"]), set()).add(row["question_id"])
    for tag, questions in gen_tags(qrels).items():
        found[("gen", tag)] = questions
    return found


def test_per_tag_means_and_intervals_equal_a_direct_computation(two_collections) -> None:
    """run_tag_measures against the per-question values (checked against pytrec_eval above) grouped by the tags
    as the files give them: every (run, tag, measure), its questions, its value (mean, sum or geometric mean),
    and its interval, scipy.stats.bootstrap's percentile interval over the tag's questions."""
    warehouse, qrels, _ = two_collections
    tags = expected_tags(qrels)
    values: dict[tuple[str, str, str], dict[str, float]] = {}
    aggregation = dict(warehouse.rows("select measure, aggregation from measure_catalog"))
    measure_of = {}
    for collection, run, question, measure, name, value in warehouse.rows(
        "select collection_id, run_id, question_id, measure, measure_name, value from question_measures where is_averaged"
    ):  # fmt: skip
        values.setdefault((collection, run, name), {})[question] = value
        measure_of[name] = measure
    expected = {}
    for (collection, run, name), by_question in values.items():
        for (tagged_collection, tag), questions in tags.items():
            tagged = [by_question[q] for q in sorted(questions) if q in by_question]
            if tagged_collection != collection or not tagged:
                continue
            how = aggregation[measure_of[name]]
            value = sum(tagged) if how == "sum" else math.exp(np.mean(tagged)) if how == "geometric_mean" else np.mean(tagged)
            expected[(collection, run, tag, name)] = (len(tagged), value)
    ours = {(c, r, tag, name): (n, value, low, high) for c, r, tag, name, n, value, low, high in warehouse.rows(
        "select collection_id, run_id, tag, measure_name, n_questions, value, ci_low, ci_high from run_tag_measures")}
    assert set(ours) == set(expected), (sorted(set(ours) - set(expected))[:5], sorted(set(expected) - set(ours))[:5])
    assert len(ours) > 700
    assert {c for c, *_ in ours} == {"docent", "gen"}
    for key, (n, value) in expected.items():
        assert ours[key][0] == n and ours[key][1] == pytest.approx(value, abs=1e-12), key
        if n < 2 or aggregation[measure_of[key[3]]] == "sum":
            assert ours[key][2:] == (None, None), key
    # the intervals of one run's tag, every measure at once, as run_measure_intervals resamples them
    bootstrap = {c: (r, s) for c, r, s in warehouse.rows("select collection_id, bootstrap_resamples, bootstrap_seed "
                                                         "from intermediate.int_collection_evaluation_settings")}
    assert bootstrap["gen"] == (500, bootstrap["docent"][1]) and bootstrap["docent"][0] == 1000  # each its own
    for collection, run, tag in [("gen", "run1", "tail"), ("docent", "keyword_overlap", "plans")]:
        resamples, seed = bootstrap[collection]
        names = sorted(name for c, r, t, name in ours if (c, r, t) == (collection, run, tag)
                       and aggregation[measure_of[name]] != "sum")  # fmt: skip
        questions = sorted(q for q in tags[(collection, tag)] if q in values[(collection, run, names[0])])
        matrix = np.array([[values[(collection, run, name)][q] for q in questions] for name in names])
        for row, name in enumerate(names):
            geometric = aggregation[measure_of[name]] == "geometric_mean"
            statistic = (lambda x, axis: np.exp(np.mean(x, axis=axis))) if geometric else np.mean
            reference = stats.bootstrap(
                (matrix[row],), statistic, n_resamples=resamples, method="percentile", vectorized=True,
                batch=BATCH_VALUES // matrix.size, random_state=np.random.default_rng(seed),
            ).confidence_interval  # fmt: skip
            assert ours[(collection, run, tag, name)][2:] == pytest.approx(tuple(reference), abs=1e-12), (run, tag, name)


def test_per_tag_comparisons_equal_a_direct_computation(two_collections) -> None:
    """gen's run1 against its baseline run0 over each tag's questions: the counts and means from the per-question
    values, the t-test scipy's, and Holm's adjustment the p-value itself (one run per family)."""
    warehouse, qrels, _ = two_collections
    tags = expected_tags(qrels)
    paired: dict[str, dict[str, tuple[float, float]]] = {}
    for question, name, run_value, baseline_value in warehouse.rows(
        "select question_id, measure_name, run_value, baseline_value from question_comparisons "
        "where collection_id = 'gen' and run_id = 'run1'"
    ):  # fmt: skip
        paired.setdefault(name, {})[question] = (run_value, baseline_value)
    rows = warehouse.rows(
        "select tag, measure_name, baseline_run_id, n_questions, wins, ties, losses, run_mean, baseline_mean, "
        "t_p_value, t_p_value_holm, randomization_p_value, randomization_p_value_holm from run_tag_comparisons "
        "where collection_id = 'gen' and run_id = 'run1'"
    )  # fmt: skip
    assert {(tag, name) for tag, name, *_ in rows} == {(tag, name) for (c, tag) in tags if c == "gen" for name in paired}
    for tag, name, baseline, n, wins, ties, losses, run_mean, baseline_mean, t_p, t_holm, r_p, r_holm in rows:
        pairs = [paired[name][q] for q in sorted(tags[("gen", tag)]) if q in paired[name]]
        run, base = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
        assert (baseline, n) == ("run0", len(pairs))
        assert (wins, ties, losses) == (int((run - base > 1e-12).sum()), int((abs(run - base) <= 1e-12).sum()),
                                        int((base - run > 1e-12).sum())), (tag, name)  # fmt: skip
        assert (run_mean, baseline_mean) == pytest.approx((run.mean(), base.mean()), abs=1e-12)
        if n >= 2 and np.ptp(run - base) > 1e-12:
            assert t_p == pytest.approx(stats.ttest_rel(run, base).pvalue, abs=1e-12), (tag, name)
        assert t_holm == t_p and r_holm == r_p and 0 <= r_p <= 1


def test_the_report_shows_each_collections_slices(two_collections, tmp_path: Path) -> None:
    warehouse = two_collections[0]
    with warehouse.connect() as con:
        page, _ = report(con, "test", "now")
        (ndcg, low, high) = con.execute(
            "select value, ci_low, ci_high from run_tag_measures where collection_id = 'gen' and run_id = 'run1' "
            "and tag = 'tail' and measure_name = 'ndcg_cut_10'").fetchone()  # fmt: skip
    assert page.count("<h3>Question slices</h3>") == 2
    row = next(line for line in page.splitlines() if 'data-tag="tail" data-run="run1"' in line)
    assert f"{ndcg:.3f} [{low:.3f}, {high:.3f}]" in row
    assert 'class="slice" data-tag="pricing" data-run="keyword_overlap"' in page


@pytest.mark.parametrize(
    ("lines", "collection", "message"),
    [
        ("q0\tfine\nnope\tpricing\n", "gen", "TAGS:2: question 'nope' is not a question of collection 'gen' "
                                             "(neither imported nor judged)"),
        ("q0 pricing extra\n", "gen", "TAGS:1: expected 2 fields (question_id tag), found 3"),
        ("q0 a,b\n", "gen", "TAGS:1: tag 'a,b' is not a plain name (letters, digits, '_', '.', ':', '/', '-')"),
        ("q0 x\nq0 x\n", "gen", "TAGS:2: question 'q0' is tagged 'x' already on line 1"),
        ("rate_limit_status api\n", "docent",
         "collection 'docent' is the lesson's seeds: its tags live in seeds/golden_question_tags.csv"),
    ],
)  # fmt: skip
def test_bad_tags_are_refused_in_one_line_and_change_nothing(two_collections, tmp_path: Path, lines, collection,
                                                             message) -> None:  # fmt: skip
    warehouse = two_collections[0]
    path = tmp_path / "tags.tsv"
    path.write_text(lines)
    before = warehouse_checksums(warehouse.db_path)
    refused = warehouse.cli("import", "--collection", collection, "--tags", str(path))
    assert refused.returncode == 2
    assert refused.stderr.strip() == f"retrieval-metrics import: error: {message.replace('TAGS', str(path))}"
    assert warehouse_checksums(warehouse.db_path) == before


def test_tags_from_a_notebook_replace_the_collections_and_judgments_keep_them_valid(two_collections,
                                                                                     tmp_path: Path) -> None:  # fmt: skip
    warehouse = two_collections[0].copy(tmp_path)
    line = rm.question_tags("gen", {"q3": ["x", "y"], "q4": "x"}, database=warehouse.db_path)
    assert line == "collection gen: 3 tags of 2 questions"
    assert warehouse.rows("select question_id, tag from raw.question_tags order by all") == [
        ("q3", "x"), ("q3", "y"), ("q4", "x")]  # fmt: skip
    with pytest.raises(InputError, match="question 'q99' is not a question of collection 'gen'"):
        rm.question_tags("gen", {"q99": ["x"]}, database=warehouse.db_path)
    qrels = tmp_path / "fewer.txt"
    qrels.write_text("q4 0 doc001 1\n")  # q3 would lose its judgments: refused, naming it
    refused = warehouse.cli("import", "--collection", "gen", "--qrels", str(qrels))
    assert refused.returncode == 2 and "question 'q3', tagged 'x', would no longer be" in refused.stderr
    assert warehouse.cli("remove", "--collection", "gen", "--all", "--yes").returncode == 0
    assert warehouse.rows("select count(*) from raw.question_tags") == [(0,)]


def test_each_collection_gates_its_own_runs_on_its_own_measures(two_collections, tmp_path: Path) -> None:
    """gen gates run1 on two of the measures where it is below run0: the build fails on those two only (run1 is
    below on others too), naming gen's questions; Docent's gate (the vars') still passes."""
    warehouse = two_collections[0].copy(tmp_path)
    means = {(run, name): value for run, name, value in warehouse.rows(
        "select run_id, measure_name, value from run_measures where collection_id = 'gen' and measure_name in "
        "(select measure_name from question_comparisons where collection_id = 'gen')")}  # fmt: skip
    names = sorted({name for _, name in means})
    below = [name for name in names if means[("run1", name)] < means[("run0", name)] - 1e-12]
    assert len(below) > 2
    gated = warehouse.cli("settings", "--collection", "gen", "--set", "gated_run_ids=run1",
                          "--set", f"gated_measures={below[0]},{below[-1]}")  # fmt: skip
    assert gated.returncode == 0, gated.stderr
    fingerprints = warehouse.rows("select * from intermediate.int_run_fingerprints order by all")
    failed = warehouse.cli("build", "--select", "int_collection_settings", "question_comparisons")
    assert failed.returncode == 2 and "test no_regression_vs_baseline_" in failed.stderr, failed.stderr[-2000:]
    assert warehouse.rows("select distinct collection_id, run_id, measure_name from dbt_test__audit.regression_gate "
                          "order by all") == [("gen", "run1", below[0]), ("gen", "run1", below[-1])]  # fmt: skip
    # the gate changes no number: no run's fingerprint moved
    assert warehouse.rows("select * from intermediate.int_run_fingerprints order by all") == fingerprints
    # gen's gate_tolerance: a drop of no more than it passes, so the gate fails on the larger drop only
    drops = sorted((means[("run0", name)] - means[("run1", name)], name) for name in (below[0], below[-1]))
    between = (drops[0][0] + drops[1][0]) / 2
    assert drops[0][0] < between < drops[1][0]
    tolerant = warehouse.cli("settings", "--collection", "gen", "--set", f"gate_tolerance={between!r}")
    assert tolerant.returncode == 0 and "gate_tolerance " in tolerant.stdout, tolerant.stderr
    failed = warehouse.cli("build", "--select", "int_collection_settings", "question_comparisons")
    assert failed.returncode == 2, failed.stderr[-2000:]
    assert warehouse.rows("select distinct collection_id, run_id, measure_name from dbt_test__audit.regression_gate "
                          "order by all") == [("gen", "run1", drops[1][1])]  # fmt: skip
    assert warehouse.cli("settings", "--collection", "gen", "--set", f"gate_tolerance={drops[1][0] + 1e-9!r}"
                         ).returncode == 0  # fmt: skip
    assert warehouse.cli("build", "--select", "int_collection_settings", "question_comparisons").returncode == 0
    assert warehouse.rows("select * from intermediate.int_run_fingerprints order by all") == fingerprints


@pytest.mark.parametrize(("value", "reason"), [("-0.01", "is not a number >= 0"), ("x", "is not a number >= 0")])
def test_a_bad_gate_tolerance_is_refused_before_dbt_starts(value: str, reason: str) -> None:
    with pytest.raises(InputError, match=re.escape(f"var gate_tolerance: {value!r} {reason}")):
        check_vars(None, ["--vars", f"{{gate_tolerance: '{value}'}}"])
    check_vars(None, ["--vars", "{gate_tolerance: 0.005}"])
