"""Comparisons on a small hand-made collection: a baseline and two candidate runs whose every number is known."""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import numpy as np
import pytest
from dbt.cli.main import dbtRunnerResult
from scipy import stats

from conftest import Warehouse
from retrieval_metrics.cli import main as cli
from retrieval_metrics.report import write_report
from retrieval_metrics.scorecard import scorecard

pytestmark = pytest.mark.dbt

# one relevant doc ("rel") per question; each run puts it at these ranks (None: not retrieved)
BASELINE_RANKS = {"q1": 1, "q2": 2, "q3": 3, "q4": 1, "q5": None}
BETTER_RANKS = {"q1": 1, "q2": 1, "q3": 1, "q4": 2, "q5": 1}
WORSE_RANKS = {"q1": 3, "q2": 2, "q3": None, "q4": 1, "q5": None}
VARS = "{baseline_run_id: base, k_values: [2], gated_collection_id: pair, gated_run_ids: [better]}"


def ndcg_at_2(rank: int | None) -> float:
    return 1 / math.log2(rank + 1) if rank is not None and rank <= 2 else 0.0


def write_run(path: Path, ranks: dict[str, int | None]) -> Path:
    lines = []
    for question_id, rank in ranks.items():
        docs = [f"other{i}" for i in range(4)]
        if rank is not None:
            docs.insert(rank - 1, "rel")
        lines += [f"{question_id} Q0 {doc} {i} {10 - i} t" for i, doc in enumerate(docs, start=1)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def compared_build(lesson: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> tuple[Warehouse, dbtRunnerResult]:
    """The lesson's warehouse (the docent collection too), copied, with the pair collection imported and built
    with VARS once; tests that build with other settings work on a copy of it."""
    folder = tmp_path_factory.mktemp("compared")
    warehouse = lesson.copy(folder)
    qrels = folder / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 rel 1\n" for q in BASELINE_RANKS))
    db = ["--db", str(warehouse.db_path)]
    assert cli(["import", "--collection", "pair", "--qrels", str(qrels), *db]) == 0
    for run_id, ranks in (("base", BASELINE_RANKS), ("better", BETTER_RANKS), ("worse", WORSE_RANKS)):
        run = write_run(folder / f"{run_id}.txt", ranks)
        assert cli(["import", "--collection", "pair", "--run", str(run), "--run-id", run_id, *db]) == 0
    return warehouse, warehouse.build("--exclude", "tag:lesson_golden", "--vars", VARS)


@pytest.fixture(scope="module")
def compared(compared_build: tuple[Warehouse, dbtRunnerResult]) -> Warehouse:
    return compared_build[0]


def test_question_comparisons_and_counts_are_exact(compared: Warehouse) -> None:
    rows = compared.rows(
        "select run_id, question_id, run_value, baseline_value, difference, outcome from question_comparisons "
        "where collection_id = 'pair' and measure_name = 'ndcg_cut_2' order by run_id, question_id"
    )
    expected = []
    for run_id, ranks in (("better", BETTER_RANKS), ("worse", WORSE_RANKS)):
        for question_id in sorted(ranks):
            run_value, base_value = ndcg_at_2(ranks[question_id]), ndcg_at_2(BASELINE_RANKS[question_id])
            outcome = "win" if run_value > base_value else "loss" if run_value < base_value else "tie"
            expected.append((run_id, question_id, run_value, base_value, run_value - base_value, outcome))
    assert rows == expected
    counts = compared.rows(
        "select run_id, wins, ties, losses, n_questions from run_comparisons "
        "where collection_id = 'pair' and measure_name = 'ndcg_cut_2' order by run_id"
    )
    assert counts == [("better", 3, 1, 1, 5), ("worse", 0, 4, 1, 5)]
    leaderboard = compared.rows(
        "select run_id, ndcg_rank, ndcg_vs_baseline from run_leaderboard where collection_id = 'pair' order by 1"
    )
    base_mean = sum(map(ndcg_at_2, BASELINE_RANKS.values())) / 5
    assert [row[:2] for row in leaderboard] == [("base", 2), ("better", 1), ("worse", 3)]
    assert leaderboard[1][2] == pytest.approx(sum(map(ndcg_at_2, BETTER_RANKS.values())) / 5 - base_mean, abs=1e-15)


def exact_sign_flip_p_value(differences: np.ndarray) -> float:
    """Independent of scipy: enumerate all 2^n sign flips of the paired differences (two-sided, as scipy:
    twice the smaller one-sided p-value, capped at 1)."""
    observed = differences.mean()
    means = np.array([(differences * signs).mean() for signs in itertools.product([1, -1], repeat=len(differences))])
    close = np.isclose(means, observed, rtol=1e-14, atol=0)
    less = np.mean((means <= observed) | close)
    greater = np.mean((means >= observed) | close)
    return min(1.0, 2 * min(less, greater))


def test_p_values_match_scipy_and_an_exact_enumeration(compared: Warehouse) -> None:
    got = {
        (row[0], row[1]): row[2:]
        for row in compared.rows(
            "select run_id, measure_name, t_statistic, t_p_value, randomization_p_value, is_exact_randomization, "
            "t_p_value_holm, randomization_p_value_holm from run_comparisons where collection_id = 'pair'"
        )
    }
    base = np.array([ndcg_at_2(r) for r in BASELINE_RANKS.values()])
    p_values = {}
    for run_id, ranks in (("better", BETTER_RANKS), ("worse", WORSE_RANKS)):
        run = np.array([ndcg_at_2(r) for r in ranks.values()])
        t = stats.ttest_rel(run, base)
        t_stat, t_p, random_p, is_exact, _, _ = got[(run_id, "ndcg_cut_2")]
        assert (t_stat, t_p) == pytest.approx((t.statistic, t.pvalue), abs=1e-12)
        assert is_exact  # 2^5 = 32 <= 10,000 permutations
        assert random_p == pytest.approx(exact_sign_flip_p_value(run - base), abs=1e-12)
        p_values[run_id] = (t_p, random_p)
    # Holm-Bonferroni over the two runs compared with the baseline: smallest p times 2, then monotone
    for column, index in (("t", 0), ("randomization", 1)):
        small, large = sorted(p_values, key=lambda run_id: p_values[run_id][index])
        adjusted_small = min(1.0, 2 * p_values[small][index])
        adjusted_large = min(1.0, max(adjusted_small, p_values[large][index]))
        position = 4 if column == "t" else 5
        assert got[(small, "ndcg_cut_2")][position] == pytest.approx(adjusted_small, abs=1e-12)
        assert got[(large, "ndcg_cut_2")][position] == pytest.approx(adjusted_large, abs=1e-12)


def test_rows_are_keyed_by_measure_name_with_measure_and_k(compared: Warehouse) -> None:
    """One row per compared measure of the catalog every collection reports (is_default) and k (k null for
    measures of the whole ranking), named as its reference prints it."""
    rows = compared.rows(
        "select run_id, measure, k, measure_name from run_comparisons where collection_id = 'pair' order by all"
    )
    catalog = compared.rows("select measure, takes_cutoff, reference from measure_catalog where is_compared and is_default")
    expected = []
    for run_id in ("better", "worse"):
        for measure, takes_cutoff, reference in catalog:
            name = measure if not takes_cutoff else f"{measure}_2" if reference == "trec_eval" else f"{measure}@2"
            expected.append((run_id, measure, 2 if takes_cutoff else None, name))
    assert rows == sorted(expected, key=lambda row: (row[0], row[1], row[2] is None, row[2] or 0, row[3]))
    assert {"ndcg_cut_2", "recall_2", "recip_rank", "map", "Judged@2"} <= {row[3] for row in rows}


def test_effect_size_is_the_mean_over_the_sd_of_the_differences(compared: Warehouse) -> None:
    got = dict(compared.rows(
        "select run_id || ' ' || measure_name, effect_size from run_comparisons where collection_id = 'pair'"
    ))
    def reciprocal_rank(rank: int | None) -> float:
        return 0.0 if rank is None else 1 / rank

    for measure_name, value in (("ndcg_cut_2", ndcg_at_2), ("recip_rank", reciprocal_rank)):
        for run_id, ranks in (("better", BETTER_RANKS), ("worse", WORSE_RANKS)):
            differences = [value(ranks[q]) - value(BASELINE_RANKS[q]) for q in BASELINE_RANKS]
            mean = sum(differences) / len(differences)
            sd = math.sqrt(sum((d - mean) ** 2 for d in differences) / (len(differences) - 1))  # ddof 1
            assert got[f"{run_id} {measure_name}"] == pytest.approx(mean / sd, abs=1e-12), (run_id, measure_name)
    assert got["better ndcg_cut_2"] > 0 > got["worse ndcg_cut_2"]
    assert all(value is not None for value in got.values())  # every compared measure's differences vary here


def test_effect_size_is_null_when_the_differences_do_not_vary(compared: Warehouse, tmp_path: Path) -> None:
    """A run equal to the baseline: every difference is 0, so the effect size (like the t-test) is undefined."""
    compared = compared.copy(tmp_path / "same")
    run = write_run(tmp_path / "same.txt", BASELINE_RANKS)
    db = ["--db", str(compared.db_path)]
    assert cli(["import", "--collection", "pair", "--run", str(run), "--run-id", "same", *db]) == 0
    compared.build("--exclude", "tag:lesson_golden", "--vars", VARS)
    rows = compared.rows(
        "select measure_name, mean_difference, effect_size, t_statistic from run_comparisons "
        "where collection_id = 'pair' and run_id = 'same'"
    )
    assert len(rows) == len(compared.rows("select 1 from run_comparisons where run_id = 'better'"))
    assert all(row[1:] == (0.0, None, None) for row in rows), rows
    # the other runs keep their effect sizes
    others = compared.rows("select count(*) from run_comparisons where run_id <> 'same' and effect_size is null")
    assert others == [(0,)]


def test_scorecard_prints_ndcg_against_the_baseline_with_effect_sizes(compared: Warehouse) -> None:
    with compared.connect() as con:
        lines = scorecard(con).splitlines()
    start = lines.index("pair: runs side by side")
    # the effect sizes are the ones checked above (+0.66 = 0.4 / sd, -0.45); p-values as scipy's
    assert lines[start + 6 : start + 9] == [
        "NDCG@k against the baseline base (wins/ties/losses over questions, mean difference, effect size d_z = "
        "mean / sd of the differences, paired t-test p, randomization p, randomization p Holm-adjusted across runs)",
        "better               k=2     3/1/1   diff +0.400   d_z  +0.66   t p  0.214   rand p  0.375   Holm  0.750",
        "worse                k=2     0/4/1   diff -0.200   d_z  -0.45   t p  0.374   rand p  1.000   Holm  1.000",
    ]


def test_the_randomization_test_samples_with_a_fixed_seed_when_not_exact(compared: Warehouse, tmp_path: Path) -> None:
    # 2^5 > 16 permutations: sampled, so the value depends on the seed and must be the same every build
    vars_ = VARS[:-1] + ", n_permutations: 16}"
    compared = compared.copy(tmp_path / "sampled")
    # only the comparison tests read n_permutations: the rest of the copy is already built with VARS; the runs'
    # fingerprints (a view, compiled with the vars as every view is) are built with them
    compared.build("--select", "int_run_fingerprints", "run_comparison_tests+", "--vars", vars_)
    first = compared.rows("select run_id, measure_name, randomization_p_value, n_permutations, is_exact_randomization "
                          "from run_comparisons where collection_id = 'pair' order by 1, 2")
    assert {row[3:] for row in first} == {(16, False)}
    compared.build("--select", "int_run_fingerprints", "run_comparison_tests+", "--vars", vars_, "--full-refresh")  # computed again
    assert compared.rows("select run_id, measure_name, randomization_p_value, n_permutations, is_exact_randomization "
                         "from run_comparisons where collection_id = 'pair' order by 1, 2") == first


def test_regression_gate_passes_for_a_better_run(compared_build: tuple[Warehouse, dbtRunnerResult]) -> None:
    gates = [r for r in compared_build[1].result if r.node.name.startswith("no_regression_vs_baseline")]
    assert len(gates) == 1 and all(str(r.status) == "pass" for r in gates)


def test_regression_gate_fails_the_build_and_names_the_questions(compared: Warehouse, tmp_path: Path) -> None:
    compared = compared.copy(tmp_path / "gated")
    result = compared.dbt(
        # the gate's test sits on question_comparisons and reads the gated runs from int_collection_settings (a
        # view of the vars): the rest of the copy is already built with VARS
        "build", "--select", "int_collection_settings", "question_comparisons", "--vars",
        VARS.replace("[better]", "[better, worse]"),
    )
    assert not result.success
    gates = [r for r in result.result if r.node.name.startswith("no_regression_vs_baseline")]
    assert len(gates) == 1 and all(str(r.status) == "fail" for r in gates)
    assert compared.rows("select distinct collection_id, run_id, measure_name from dbt_test__audit.regression_gate "
                         "order by all") == [("pair", "worse", "ndcg_cut_2"), ("pair", "worse", "recall_2")]  # fmt: skip
    failing = compared.rows(
        "select run_id, measure_name, question_id, baseline_value, run_value, difference "
        "from dbt_test__audit.regression_gate where measure_name = 'ndcg_cut_2' order by question_id"
    )
    # worse loses only q1 at NDCG@2 (rank 1 -> 3); its other questions tie, so they are not named
    expected = [
        ("worse", "ndcg_cut_2", q, ndcg_at_2(BASELINE_RANKS[q]), ndcg_at_2(WORSE_RANKS[q]),
         ndcg_at_2(WORSE_RANKS[q]) - ndcg_at_2(BASELINE_RANKS[q]))
        for q in sorted(BASELINE_RANKS) if ndcg_at_2(WORSE_RANKS[q]) < ndcg_at_2(BASELINE_RANKS[q])
    ]
    assert failing == expected and [row[2] for row in failing] == ["q1"]


RUNS = {"base": BASELINE_RANKS, "better": BETTER_RANKS, "worse": WORSE_RANKS}


def holm(p_values: dict[str, float]) -> dict[str, float]:
    """Holm-Bonferroni of one family, directly: the i-th smallest (from 0) times (m - i), running max, capped at 1."""
    adjusted, running = {}, 0.0
    for position, (key, p) in enumerate(sorted(p_values.items(), key=lambda item: (item[1], item[0]))):
        running = max(running, min(1.0, (len(p_values) - position) * p))
        adjusted[key] = running
    return adjusted


@pytest.fixture(scope="module")
def two_baselines(compared: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> tuple[Warehouse, dbtRunnerResult]:
    """The compared warehouse with the pair collection's own baselines set to base and worse (given in another
    order), built again with VARS (whose baseline_run_id, base, the collection's own setting overrides)."""
    warehouse = compared.copy(tmp_path_factory.mktemp("two-baselines"))
    given = warehouse.cli("settings", "--collection", "pair", "--set", "baseline_run_id=worse,base")
    assert given.returncode == 0 and "baseline_run_id base, worse (set here)" in given.stdout, given.stderr
    return warehouse, warehouse.build("--exclude", "tag:lesson_golden", "--vars", VARS)


def test_every_run_is_compared_with_every_baseline_but_itself(two_baselines: tuple[Warehouse, dbtRunnerResult]) -> None:
    """Each (run, baseline) pair's numbers: the paired t-test and its 95% interval as scipy's, the randomization
    test by an exact enumeration, Holm within each (collection, baseline, measure name) family; one row per key in
    every table of comparisons."""
    warehouse, result = two_baselines
    pairs = warehouse.rows("select distinct run_id, baseline_run_id from question_comparisons "
                           "where collection_id = 'pair' order by all")  # fmt: skip
    assert pairs == [("base", "worse"), ("better", "base"), ("better", "worse"), ("worse", "base")]
    got = {(row[0], row[1]): row[2:] for row in warehouse.rows(
        "select run_id, baseline_run_id, n_questions, mean_difference, difference_ci_low, difference_ci_high, "
        "t_statistic, t_p_value, randomization_p_value, t_p_value_holm, randomization_p_value_holm "
        "from run_comparisons where collection_id = 'pair' and measure_name = 'ndcg_cut_2'")}  # fmt: skip
    assert sorted(got) == pairs
    values = {run: np.array([ndcg_at_2(rank) for rank in ranks.values()]) for run, ranks in RUNS.items()}
    t_p, random_p = {}, {}
    for run, baseline in pairs:
        n, difference, low, high, t_statistic, t_p_value, randomization_p, _, _ = got[run, baseline]
        t = stats.ttest_rel(values[run], values[baseline])
        interval = t.confidence_interval(0.95)
        differences = values[run] - values[baseline]
        margin = stats.t.ppf(0.975, 4) * differences.std(ddof=1) / math.sqrt(5)  # the textbook interval
        assert n == 5 and difference == pytest.approx(differences.mean(), abs=1e-15)
        assert (low, high) == pytest.approx((interval.low, interval.high), abs=1e-12)
        assert (low, high) == pytest.approx((differences.mean() - margin, differences.mean() + margin), abs=1e-12)
        assert (t_statistic, t_p_value) == pytest.approx((t.statistic, t.pvalue), abs=1e-12)
        assert randomization_p == pytest.approx(exact_sign_flip_p_value(differences), abs=1e-12)
        t_p.setdefault(baseline, {})[run] = t_p_value
        random_p.setdefault(baseline, {})[run] = randomization_p
    for baseline in ("base", "worse"):  # one family per baseline: its two runs
        for p_values, position in ((t_p[baseline], 7), (random_p[baseline], 8)):
            for run, adjusted in holm(p_values).items():
                assert got[run, baseline][position] == pytest.approx(adjusted, abs=1e-12), (run, baseline)
    grains = {  # every table of comparisons: one row per key, and no run against itself
        "question_comparisons": "collection_id, run_id, baseline_run_id, question_id, measure_name",
        "run_comparison_tests": "collection_id, run_id, baseline_run_id, tag, measure_name",
        "run_comparisons": "collection_id, run_id, baseline_run_id, measure_name",
        "run_tag_comparisons": "collection_id, run_id, baseline_run_id, tag, measure_name",
        "run_leaderboard": "collection_id, k, run_id",
    }
    for table, key in grains.items():
        rows, keys = warehouse.rows(f"select count(*), count(distinct ({key})) from {table}")[0]
        assert rows == keys and (rows > 0 or table == "run_tag_comparisons"), table  # no tags here
        if "baseline_run_id" in key:
            assert warehouse.rows(f"select count(*) from {table} where run_id = baseline_run_id") == [(0,)], table


def test_a_change_of_baselines_recomputes_the_comparisons_only(two_baselines: tuple[Warehouse, dbtRunnerResult]
                                                                 ) -> None:  # fmt: skip
    """The build after the change computed the comparisons of the pair collection's runs, and no measure."""
    warehouse, _ = two_baselines

    def computed(model: str) -> list[tuple[object, ...]]:  # the runs the last build computed
        return warehouse.rows(f"select distinct collection_id, run_id from {model} where computed_at = "
                              "(select max(computed_at) from run_means_by_qrels_version) order by all")  # fmt: skip

    for model in ("question_measures", "run_measures", "run_measure_intervals", "run_tag_measures"):
        assert computed(model) == [], model
    for model in ("question_comparisons", "run_comparison_tests"):
        assert computed(model) == [("pair", run) for run in sorted(RUNS)], model


def test_the_leaderboard_scorecard_and_gate_with_two_baselines(two_baselines: tuple[Warehouse, dbtRunnerResult],
                                                               tmp_path: Path) -> None:  # fmt: skip
    warehouse, result = two_baselines
    # one row per run and k: the baselines first, the differences against the first baseline by run id
    leaderboard = warehouse.rows("select run_id, run_position, is_baseline, baseline_run_id, ndcg_vs_baseline "
                                 "from run_leaderboard where collection_id = 'pair' order by run_position")  # fmt: skip
    base_mean = sum(map(ndcg_at_2, BASELINE_RANKS.values())) / 5
    assert [row[:4] for row in leaderboard] == [("base", 1, True, "base"), ("worse", 2, True, "base"),
                                                ("better", 3, False, "base")]  # fmt: skip
    assert leaderboard[2][4] == pytest.approx(sum(map(ndcg_at_2, BETTER_RANKS.values())) / 5 - base_mean, abs=1e-15)
    with warehouse.connect() as con:
        lines = scorecard(con).splitlines()
    start = lines.index("pair: runs side by side")
    blocks = [line for line in lines[start:] if line.startswith("NDCG@k against the baseline")]
    assert blocks[0].startswith("NDCG@k against the baseline base (wins/ties/losses") and blocks[1] == (
        "NDCG@k against the baseline worse (as above; Holm across the runs compared with it)")
    after = lines.index(blocks[1])
    assert [line.split()[0] for line in lines[after + 1 : after + 3]] == ["base", "better"]
    assert lines[after + 1].split()[2] == "1/4/0"  # base against worse: q1 won, the rest tied
    # the report: a chart and a table per baseline, both marked in the leaderboard
    with warehouse.connect() as con:
        write_report(con, "two baselines", tmp_path / "report")
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    section = page[page.index('<section id="collection-pair">'):]
    assert "baseline runs: base, worse." in section
    assert re.findall(r"<h3>Against the baseline (\w+)</h3>", section) == ["base", "worse"]
    assert {path.name for path in (tmp_path / "report").glob("pair-ndcg-vs-*")} == {
        "pair-ndcg-vs-baseline-base.png", "pair-ndcg-vs-baseline-worse.png"}  # fmt: skip
    assert len(re.findall(r'data-run="worse" data-measure="ndcg_cut_2" data-baseline="base"', section)) == 1
    assert len(re.findall(r'<tr data-run="(?:base|worse)" data-k="2" class="baseline"', section)) == 2
    listed = warehouse.cli("list").stdout
    assert re.search(r"^pair .* base, worse$", listed, re.MULTILINE), listed
    # the gate holds better to both baselines (passes); worse, a baseline, to the other (fails, naming base)
    gates = [r for r in result.result if r.node.name.startswith("no_regression_vs_baseline")]
    assert len(gates) == 1 and str(gates[0].status) == "pass"
    gated = warehouse.copy(tmp_path / "gated")
    failed = gated.dbt("build", "--select", "int_collection_settings", "question_comparisons", "--vars",
                       VARS.replace("[better]", "[better, worse]"))  # fmt: skip
    assert not failed.success
    assert gated.rows("select distinct run_id, baseline_run_id, measure_name from dbt_test__audit.regression_gate "
                      "order by all") == [("worse", "base", "ndcg_cut_2"), ("worse", "base", "recall_2")]  # fmt: skip
