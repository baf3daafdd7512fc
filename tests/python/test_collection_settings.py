"""Settings per collection (retrieval_metrics/per_collection.py, int_collection_settings): one warehouse
holds Docent on its seed's lesson preset (k = 1, 2, 3, baseline keyword_overlap, its golden tests green) and an
imported collection on the trec-dl preset (k = 10, 100, 1000, relevance level 2) with baseline run0, built
together in one build; its values equal pytrec_eval's under its settings, the scorecard leads with its headline;
a changed setting recomputes that collection's runs only; bad settings are refused
in one line, exit 2, nothing changed."""

from __future__ import annotations

import random
from pathlib import Path

import duckdb
import pytest
import pytrec_eval

import retrieval_metrics as rm
from conftest import Warehouse, warehouse_checksums
from retrieval_metrics.building import add_missing_raw_tables
from retrieval_metrics.per_collection import seed_settings, values_of
from retrieval_metrics.presets import PRESETS
from retrieval_metrics.report import report
from retrieval_metrics.scorecard import scorecard, with_interval
from test_lesson_scorecard import LESSON_SCORECARD
from test_trec_agreement import make_collection, parse_qrels, parse_run

pytestmark = pytest.mark.dbt

GEN_KS = [10, 100, 1000]


@pytest.fixture(scope="module")
def two_collections(lesson: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> tuple[Warehouse, Path, list[Path]]:
    """The lesson's warehouse plus collection gen (two runs) on its own settings, built by the command (every
    test, the lesson's golden values included)."""
    folder = tmp_path_factory.mktemp("collection-settings")
    qrels, runs = make_collection(random.Random(25), folder / "gen", n_runs=2)
    warehouse = lesson.copy(folder / "warehouse")
    for number, run in enumerate(runs):
        judgments = ["--qrels", str(qrels)] if number == 0 else []
        imported = warehouse.cli(
            "import", "--collection", "gen", *judgments, "--run", str(run), "--run-id", f"run{number}"
        )
        assert imported.returncode == 0, imported.stderr
    given = warehouse.cli("settings", "--collection", "gen", "--preset", "trec-dl", "--set", "baseline_run_id=run0")
    assert given.returncode == 0, given.stderr
    assert given.stdout.strip() == (
        "retrieval-metrics settings: collection gen: preset trec-dl (set here); k_values 10, 100, 1000 (set here); "
        "baseline_run_id run0 (set here); relevance_level 2 (set here); averaging all_questions (set here); "
        "judged_docs_only false (set here); err_max_grade 4 (the var's); ignore_identical_ids false (set here); "
        "iprec_rule trec_eval_9 (set here)"
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
                  '"iprec_rule": "trec_eval_9", "judged_docs_only": false, "k_values": [1, 2, 3], '
                  '"preset": "lesson", "relevance_level": 1}',
        "gen": '{"averaging": "all_questions", "err_max_grade": 4, "ignore_identical_ids": false, '
               '"iprec_rule": "trec_eval_9", "judged_docs_only": false, "k_values": [10, 100, 1000], '
               '"preset": "trec-dl", "relevance_level": 2}',
    }  # fmt: skip
    assert warehouse.rows("select collection_id, setting, list(value order by value), any_value(set_by) "
                          "from intermediate.int_collection_settings group by all order by all") == [
        ("docent", "averaging", ["all_questions"], "seed"), ("docent", "baseline_run_id", ["keyword_overlap"], "seed"),
        ("docent", "err_max_grade", ["4"], "seed"), ("docent", "ignore_identical_ids", ["false"], "seed"),
        ("docent", "iprec_rule", ["trec_eval_9"], "seed"), ("docent", "judged_docs_only", ["false"], "seed"),
        ("docent", "k_values", ["1", "2", "3"], "seed"), ("docent", "preset", ["lesson"], "seed"),
        ("docent", "relevance_level", ["1"], "seed"),
        ("gen", "averaging", ["all_questions"], "warehouse"), ("gen", "baseline_run_id", ["run0"], "warehouse"),
        ("gen", "err_max_grade", ["4"], "var"), ("gen", "ignore_identical_ids", ["false"], "warehouse"),
        ("gen", "iprec_rule", ["trec_eval_9"], "warehouse"), ("gen", "judged_docs_only", ["false"], "warehouse"),
        ("gen", "k_values", ["10", "100", "1000"], "warehouse"), ("gen", "preset", ["trec-dl"], "warehouse"),
        ("gen", "relevance_level", ["2"], "warehouse"),
    ]  # fmt: skip


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
    """gen's runs lead with trec-dl's nDCG@10, MAP and R@1000, the last two named with their relevance level;
    Docent's block is the lesson's table, unchanged."""
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
            f"headline (trec-dl): ndcg_cut_10={means[(run, 'ndcg_cut_10')]}   map(rel=2)={means[(run, 'map')]}   "
            f"recall_1000(rel=2)={means[(run, 'recall_1000')]}"
        )
    docent = lines.index("docent / keyword_overlap  (retriever keyword_overlap, 9 questions)")
    assert lines[docent : docent + 5] == LESSON_SCORECARD.splitlines()

    with warehouse.connect() as con:  # the report: gen's section opens with the same headline, Docent's has none
        page, _ = report(con, "warehouse", "now")
    docent_section, gen_section = page[page.index('id="collection-docent"'):].split('id="collection-gen"')
    assert "Headline" not in docent_section
    assert gen_section.index("<h3>Headline (trec-dl preset)</h3>") < gen_section.index("Leaderboard at each k")
    assert "<th>map(rel=2)</th>" in gen_section and 'class="headline" data-run="run1"' in gen_section


def test_a_changed_setting_recomputes_that_collection_only(two_collections, tmp_path: Path) -> None:
    warehouse = two_collections[0].copy(tmp_path)
    docent_before = warehouse.rows("select * from question_measures where collection_id = 'docent' order by all")
    assert warehouse.cli("settings", "--collection", "gen", "--set", "k_values=[10, 20]").returncode == 0
    built = warehouse.cli("build")
    assert built.returncode == 0, built.stdout + built.stderr
    assert warehouse.rows(
        "select collection_id, run_id from build_state.run_plans where model_name = 'question_measures' order by all"
    ) == [("gen", "run0"), ("gen", "run1")]
    assert warehouse.rows("select distinct k from run_metrics where collection_id = 'gen' order by k") == [(10,), (20,)]
    assert (
        warehouse.rows("select * from question_measures where collection_id = 'docent' order by all") == docent_before
    )

    # unset: the var's default again (k = 1, 2, 3), through the notebook's call; Docent keeps its seed's
    line = rm.collection_settings("gen", database=warehouse.db_path, k_values=None, relevance_level=None)
    assert line == ("collection gen: preset trec-dl (set here); k_values 1, 2, 3 (the var's); baseline_run_id run0 "
                    "(set here); relevance_level 1 (the var's); averaging all_questions (set here); judged_docs_only "
                    "false (set here); err_max_grade 4 (the var's); ignore_identical_ids false (set here); "
                    "iprec_rule trec_eval_9 (set here)")  # fmt: skip
    assert rm.collection_settings("docent", database=warehouse.db_path) == (
        "collection docent: preset lesson (the seed's); k_values 1, 2, 3 (the seed's); "
        "baseline_run_id keyword_overlap (the seed's); "
        "relevance_level 1 (the seed's); averaging all_questions (the seed's); judged_docs_only false (the seed's); "
        "err_max_grade 4 (the seed's); ignore_identical_ids false (the seed's); iprec_rule trec_eval_9 (the seed's)"
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
                  '"iprec_rule": "trec_eval_9", "judged_docs_only": false, "k_values": [1, 2, 3], '
                  '"preset": "lesson", "relevance_level": 1}',
        "gen": '{"averaging": "retrieved_only", "err_max_grade": 4, "ignore_identical_ids": false, '
               '"iprec_rule": "trec_eval_9", "judged_docs_only": true, "k_values": [4, 8], '
               '"preset": null, "relevance_level": 3}',
    }  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--collection", "gen", "--set", "k_values=0"], "collection 'gen': setting k_values: '0' holds '0', not a positive integer"),
        (["--collection", "gen", "--set", "k_values=5,99999999999999999999"],
         "collection 'gen': setting k_values: '5,99999999999999999999' holds 99999999999999999999, more than 2147483647"),
        (["--collection", "gen", "--set", "k_values=5,x"], "collection 'gen': setting k_values: '5,x' holds 'x', not a positive integer"),
        (["--collection", "gen", "--set", "baseline_run_id=nope"],
         "collection 'gen': setting baseline_run_id: 'nope' is not a run of the collection (its runs: run0, run1)"),
        (["--collection", "gen", "--set", "relevance=2"],
         "collection 'gen': no setting 'relevance' (a collection's own settings: preset, k_values, baseline_run_id, "
         "relevance_level, averaging, judged_docs_only, err_max_grade, ignore_identical_ids, iprec_rule)"),
        (["--collection", "gen", "--preset", "trec-dk"],
         "collection 'gen': setting preset: 'trec-dk' is not one of lesson, trec-dl, msmarco-passage, beir, trec-rag"),
        (["--collection", "gen", "--set", "relevance_level=-1"],
         "collection 'gen': setting relevance_level: '-1' is not an integer >= 0"),
        (["--collection", "gen", "--set", "averaging=mean"],
         "collection 'gen': setting averaging: 'mean' is not one of all_questions, retrieved_only"),
        (["--collection", "gen", "--set", "judged_docs_only=yes"],
         "collection 'gen': setting judged_docs_only: 'yes' is not true or false"),
        (["--collection", "gen", "--set", "err_max_grade=0"],
         "collection 'gen': setting err_max_grade: '0' is not an integer >= 1"),
        (["--collection", "gen", "--set", "k_values"], "--set 'k_values' is not NAME=VALUE, e.g. --set k_values=10,100"),
        (["--collection", "gen", "--set", "k_values=5", "--unset", "k_values"], "collection 'gen': setting k_values both set and unset"),
        (["--collection", "elsewhere", "--set", "k_values=5"],
         "collection 'elsewhere' has no judgments yet: import --qrels (or --beir) first"),
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
