"""Many runs at once (retrieval_metrics/anova.py and its marts) on a generated collection of 12 runs with known
differences: three tiers of four runs (each tier's runs draw the relevant doc's rank from the same distribution;
two of the first tier are the same ranking), so that the tiers differ and the runs of one tier tie.

- the two-way ANOVA equals statsmodels' ols("value ~ C(run) + C(question)") + anova_lm;
- Tukey's HSD p-values equal scipy's studentized_range on statsmodels' residual mean square;
- the randomized Tukey HSD equals a direct implementation (a loop over permutations and runs) with the same draws;
- the letter groups separate the tiers and join each tier's runs;
- the topic set size design equals statsmodels' TTestPower and FTestAnovaPower on the same variance, and the
  paired t-test's questions needed equal Sakai's procedure (his paper's starting n and approximated power);
- a measure that does not vary gets nulls; bad settings are refused naming the collection and the key.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from conftest import Warehouse, warehouse_checksums
from retrieval_metrics import anova
from retrieval_metrics.cli import main as cli
from retrieval_metrics.report import report
from retrieval_metrics.scorecard import scorecard

COLLECTION = "twelve"
N_QUESTIONS = 50
# each tier's runs draw the relevant doc's rank from these (the first tier's runs are the best)
TIERS = {"a": [1, 1, 1, 2], "b": [2, 2, 2, 3], "c": [5, 8, 10, 10]}
RUNS = [f"{tier}{i}" for tier in TIERS for i in range(4)]  # a0..a3, b0..b3, c0..c3
SEED = 4242


def generated_ranks() -> dict[str, list[int]]:
    """The rank of each question's one relevant doc in each run: a1 is a0's ranking (an exact tie)."""
    rng = np.random.default_rng(SEED)
    ranks = {run: [int(r) for r in rng.choice(TIERS[run[0]], N_QUESTIONS)] for run in RUNS}
    ranks["a1"] = ranks["a0"]
    return ranks


def reciprocal_ranks() -> np.ndarray:
    ranks = generated_ranks()
    return np.array([[1 / r for r in ranks[run]] for run in RUNS])  # runs x questions, RUNS order


def as_frame(values: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame([(RUNS[i], f"q{j:02d}", values[i, j]) for i in range(values.shape[0])
                         for j in range(values.shape[1])], columns=["run", "question", "value"])  # fmt: skip


def statsmodels_table(values: np.ndarray) -> pd.DataFrame:
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    return anova_lm(smf.ols("value ~ C(run) + C(question)", as_frame(values)).fit())


def direct_table(values: np.ndarray) -> dict[str, float]:
    """The two-way ANOVA by its textbook sums, one cell at a time, for the marts (no statsmodels needed)."""
    m, n = values.shape
    grand = sum(map(sum, values)) / (m * n)
    runs = [sum(row) / n for row in values]
    questions = [sum(values[i][j] for i in range(m)) / m for j in range(n)]
    ss_runs = n * sum((r - grand) ** 2 for r in runs)
    ss_residual = sum((values[i][j] - runs[i] - questions[j] + grand) ** 2 for i in range(m) for j in range(n))
    ms_residual = ss_residual / ((m - 1) * (n - 1))
    f_runs = ss_runs / (m - 1) / ms_residual
    return {"ss_runs": ss_runs, "ss_residual": ss_residual, "ms_residual": ms_residual, "f_runs": f_runs,
            "p_runs": stats.f.sf(f_runs, m - 1, (m - 1) * (n - 1)), "df_residual": (m - 1) * (n - 1)}  # fmt: skip


@pytest.mark.bench
def test_the_two_way_anova_is_statsmodels() -> None:
    for values in (reciprocal_ranks(), np.random.default_rng(1).random((5, 7))):
        table, expected = anova.anova(values), statsmodels_table(values)
        runs, questions, residual = (expected.loc[name] for name in ("C(run)", "C(question)", "Residual"))
        got = [(table.ss_runs, table.df_runs, table.ms_runs, table.f_runs, table.p_runs),
               (table.ss_questions, table.df_questions, table.ms_questions, table.f_questions, table.p_questions),
               (table.ss_residual, table.df_residual, table.ms_residual)]  # fmt: skip
        want = [tuple(row[["sum_sq", "df", "mean_sq", "F", "PR(>F)"]]) for row in (runs, questions)]
        want.append(tuple(residual[["sum_sq", "df", "mean_sq"]]))
        for got_row, want_row in zip(got, want, strict=True):
            assert got_row == pytest.approx(want_row, rel=1e-9, abs=1e-12)


@pytest.mark.bench
def test_tukey_hsd_is_the_studentized_range_on_statsmodels_residual() -> None:
    values = reciprocal_ranks()
    residual = statsmodels_table(values).loc["Residual"]
    means, m, n = values.mean(axis=1), *values.shape
    i, j = anova.pairs(m)
    expected = [stats.studentized_range.sf(abs(means[a] - means[b]) / math.sqrt(residual["mean_sq"] / n), m,
                                           residual["df"]) for a, b in zip(i, j, strict=True)]  # fmt: skip
    assert anova.tukey_hsd_p_values(means, anova.anova(values)) == pytest.approx(expected, rel=1e-9)


def direct_randomized_tukey(values: np.ndarray, n_permutations: int, seed: int) -> dict[tuple[int, int], float]:
    """Carterette's randomized Tukey HSD, one permutation, run and question at a time, with the draws of
    anova.hsd_draws: np.random.default_rng(seed), one rng.permuted(runs of each question, axis=-1) a permutation."""
    m, n = values.shape
    rng = np.random.default_rng(seed)
    ranges = []
    for _ in range(n_permutations):
        draw = rng.permuted(np.tile(np.arange(m), (n, 1)), axis=-1)  # questions x runs
        means = [sum(values[draw[q, r], q] for q in range(n)) / n for r in range(m)]
        ranges.append(max(means) - min(means))
    means = values.mean(axis=1)
    return {(a, b): sum(r >= abs(means[a] - means[b]) - anova.TIE_TOLERANCE for r in ranges) / n_permutations
            for a in range(m) for b in range(a + 1, m)}  # fmt: skip


def test_studentized_ranges_shared_among_processes_are_scipys_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(anova, "SPLIT_FROM", 4)
    monkeypatch.setattr(anova.os, "cpu_count", lambda: 2)  # this process and one child, on any machine
    q = np.array([0.0, 0.3, 1.7, 2.5, 3.1, 1.7, 4.9, 6.2])
    got = anova.studentized_range_sf(q, 5, 36)
    assert got.tobytes() == np.asarray(stats.studentized_range.sf(q, 5, 36), dtype=float).tobytes()


def test_the_randomized_tukey_hsd_is_a_direct_implementation_with_the_same_draws() -> None:
    values = reciprocal_ranks()
    expected = direct_randomized_tukey(values, 300, 7)
    ranges = anova.permuted_ranges(values[None], 300, 7)[0]
    got = anova.randomized_tukey_p_values(values.mean(axis=1), ranges)
    assert dict(zip(zip(*anova.pairs(len(RUNS))), got, strict=True)) == expected


def test_permuted_means_are_summed_one_question_after_the_other(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every permuted range equals a direct loop's (each run's permuted values summed question by question), for
    several measures at once and many questions, over chunks of 7 permutations."""
    matrices = np.random.default_rng(3).random((2, 4, 200))
    m, n = matrices.shape[1:]
    monkeypatch.setattr(anova, "GATHERED_VALUES", 7 * n * m)
    rng, expected = np.random.default_rng(5), []
    for _ in range(150):
        draw = rng.permuted(np.tile(np.arange(m), (n, 1)), axis=-1)  # questions x runs
        means = [[sum(values[draw[q, r], q] for q in range(n)) / n for r in range(m)] for values in matrices]
        expected.append([max(row) - min(row) for row in means])
    assert np.array_equal(anova.permuted_ranges(matrices, 150, 5), np.array(expected).T)


def test_the_letter_groups_separate_the_tiers_and_join_each_tier() -> None:
    rows = generated_rows()
    settings = {COLLECTION: anova.CollectionSettings(0.05, 0.8, 1000, (0.05,))}
    pairs = anova.pair_tests(rows, settings, 20261202)
    letters = anova.letter_rows(pairs).set_index("run_id")["letters"]
    for tier in TIERS:
        shared = set.intersection(*(set(letters[f"{tier}{i}"]) for i in range(4)))
        assert shared, (tier, letters.to_dict())
        others = [run for run in RUNS if run[0] != tier]
        assert all(not shared & set(letters[run]) for run in others), (tier, letters.to_dict())
    assert letters["a0"] == letters["a1"] and letters["a0"].startswith("a")
    across = pairs[pairs["run_id"].str[0] != pairs["other_run_id"].str[0]]
    assert across["is_significant"].all()
    # a pair of the same tier has the difference the draws gave it, and no pair of a tier is significant here
    assert not pairs[pairs["run_id"].str[0] == pairs["other_run_id"].str[0]]["is_significant"].any()


def test_the_letter_display_of_an_overlap() -> None:
    # means 3 > 2 > 1: only 3 and 1 differ -> {3, 2} a, {2, 1} b
    assert anova.letter_groups(np.array([3.0, 2.0, 1.0]), np.array([False, True, False])) == ["a", "ab", "b"]
    assert anova.letter_groups(np.array([1.0, 2.0]), np.array([True])) == ["b", "a"]
    assert [anova.letter_name(i) for i in (0, 25, 26, 27)] == ["a", "z", "aa", "ab"]


@pytest.mark.bench
def test_the_topic_set_size_design_is_statsmodels() -> None:
    from statsmodels.stats.power import FTestAnovaPower, TTestPower

    variance = anova.anova(reciprocal_ranks()).ms_residual
    for alpha, power, n, m in ((0.05, 0.8, N_QUESTIONS, 12), (0.01, 0.9, 9, 3), (0.05, 0.8, 9, 2)):
        effect = TTestPower().solve_power(nobs=n, alpha=alpha, power=power)
        assert anova.detectable_difference_t(variance, n, alpha, power) == pytest.approx(
            effect * math.sqrt(2 * variance), rel=1e-6)  # fmt: skip
        f = FTestAnovaPower().solve_power(nobs=m * n, alpha=alpha, power=power, k_groups=m)
        assert anova.detectable_difference_anova(variance, m, n, alpha, power) == pytest.approx(
            f * math.sqrt(2 * m * variance), rel=1e-6)  # fmt: skip
        for difference in (0.02, 0.05, 0.1, 0.3):
            nobs = TTestPower().solve_power(effect_size=difference / math.sqrt(2 * variance), alpha=alpha, power=power)
            assert anova.questions_needed_t(difference, variance, alpha, power) == math.ceil(nobs)
            total = FTestAnovaPower().solve_power(effect_size=difference / math.sqrt(2 * m * variance), alpha=alpha,
                                                  power=power, k_groups=m)  # fmt: skip
            assert anova.questions_needed_anova(difference, variance, m, alpha, power) == math.ceil(total / m)
            expected = TTestPower().power(difference / math.sqrt(2 * variance), n, alpha)
            got = anova.paired_t_power(difference / math.sqrt(2 * variance), n, alpha)
            assert got == pytest.approx(expected if math.isfinite(expected) else 1.0, rel=1e-9)  # statsmodels: nan far out


def sakai_questions_needed(difference: float, difference_variance: float, alpha: float, power: float) -> int:
    """Sakai's topic set size design for the paired t-test (Sakai, "Topic set size design", Information Retrieval
    Journal 19(3), 2016, section 4; his samplesizeTTEST2 sheet): minimum effect minDelta = difference / sigma_d;
    a first n = ((z_(alpha/2) - z_(1-power)) / minDelta)^2 + z_(alpha/2)^2 / 2, z_P the upper P point of N(0, 1);
    then the least n whose power, approximated as 1 - Phi(u(w)) + Phi(u(-w)) with w the t critical value at n - 1
    degrees of freedom and u(x) = (x (1 - 1 / (4 phi)) - sqrt(n) minDelta) / sqrt(1 + x^2 / (2 phi)), phi = n - 1,
    reaches `power`."""
    effect = difference / math.sqrt(difference_variance)
    z_alpha, z_beta = stats.norm.isf(alpha / 2), stats.norm.isf(1 - power)

    def approximate_power(n: int) -> float:
        phi = n - 1
        w = stats.t.isf(alpha / 2, phi)

        def u(x: float) -> float:
            return (x * (1 - 1 / (4 * phi)) - math.sqrt(n) * effect) / math.sqrt(1 + x**2 / (2 * phi))

        return float(1 - stats.norm.cdf(u(w)) + stats.norm.cdf(u(-w)))

    n = max(2, math.ceil(((z_alpha - z_beta) / effect) ** 2 + z_alpha**2 / 2) - 5)
    while approximate_power(n) < power:
        n += 1
    return n


def test_the_questions_a_paired_t_test_needs_are_sakais() -> None:
    """Sakai takes the difference's variance as twice the residual variance of the two-way ANOVA; over a grid of
    alphas, differences, variances and powers (52 to 480 questions) his procedure and ours give the same number."""
    for alpha in (0.01, 0.05):
        for difference, variance in ((0.05, 0.04), (0.1, 0.04), (0.1, 0.1), (0.2, 0.3)):
            for power in (0.7, 0.9):
                expected = sakai_questions_needed(difference, 2 * variance, alpha, power)
                assert anova.questions_needed_t(difference, variance, alpha, power) == expected, (
                    difference, variance, power)  # fmt: skip


def test_every_rows_search_at_once_equals_each_alone() -> None:
    """measure_questions_needed searches every (family, difference) at once; each count is the one the row's own
    search gives, whatever the others (few and many questions, no variance, one run)."""
    variances = [0.0004, 0.04, 0.3, 2.0, 0.0, None]
    tables = pd.DataFrame([(COLLECTION, f"m{i}_{runs}", "m", None, runs, 30, variance)
                           for i, variance in enumerate(variances) for runs in (1, 2, 7)],
                          columns=["collection_id", "measure_name", "measure", "k", "n_runs", "n_questions",
                                   "residual_variance"])  # fmt: skip
    settings = {COLLECTION: anova.CollectionSettings(0.05, 0.9, 50, (0.001, 0.05, 0.3, 3.0))}
    needed = anova.questions_needed(tables, settings)
    assert len(needed) == 72 and needed["questions_needed_t"].notna().sum() == 48
    for row in needed.itertuples(index=False):
        variance = None if pd.isna(row.residual_variance) else row.residual_variance
        alone_t = None if variance is None else anova.questions_needed_t(row.target_difference, variance, 0.05, 0.9)
        alone_anova = None if variance is None else anova.questions_needed_anova(row.target_difference, variance,
                                                                                 row.n_runs, 0.05, 0.9)  # fmt: skip
        assert (None if pd.isna(row.questions_needed_t) else row.questions_needed_t) == alone_t, row
        assert (None if pd.isna(row.questions_needed_anova) else row.questions_needed_anova) == alone_anova, row


def test_the_power_integral_where_the_noncentral_t_gives_none_is_scipys_bit_for_bit() -> None:
    """Two questions and a large effect: scipy's noncentral t gives nan, and paired_t_powers integrates over the
    chi-square with its own density; the same bits as quad over scipy.stats' norm.cdf and chi2.pdf."""
    from scipy import integrate

    effects, n, alpha = np.array([3.0, 6.48, 9.27, 18.6, 40.0] * 2), np.full(10, 2.0), np.repeat([0.05, 0.01], 5)
    critical, noncentrality = stats.t.isf(alpha / 2, n - 1), effects * np.sqrt(n)
    expected, integrated = [], []
    for c, nc in zip(critical, noncentrality):

        def density(v: float, c: float = float(c), nc: float = float(nc)) -> float:
            scale = c * math.sqrt(v)
            return float((stats.norm.cdf(nc - scale) + stats.norm.cdf(-nc - scale)) * stats.chi2.pdf(v, 1.0))

        power = stats.nct.sf(c, 1.0, nc) + stats.nct.cdf(-c, 1.0, nc)
        integrated.append(bool(np.isnan(power)))
        expected.append(min(1.0, integrate.quad(density, 0, np.inf, limit=200)[0] if np.isnan(power) else power))
    assert sum(integrated) >= 5
    assert anova.paired_t_powers(effects, n, alpha).tolist() == expected


def test_a_new_run_takes_the_other_pairs_paired_tests_from_their_stored_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pair whose two value vectors are unchanged keeps its stored paired tests (pair_fingerprint); the pairs of
    a new run are tested, and everything equals computing every pair afresh."""
    rows = generated_rows()
    settings = {COLLECTION: anova.CollectionSettings(0.05, 0.8, 200, (0.05,))}
    newest = RUNS[-1]
    before = anova.pair_tests(rows[rows["run_id"] != newest], settings, 7, 500, code="v1")
    from retrieval_metrics import stats

    tested, compared = [], stats.compared
    monkeypatch.setattr(stats, "compared", lambda run, *args: tested.append(len(run)) or compared(run, *args))
    after = anova.pair_tests(rows, settings, 7, 500, stored=before, code="v1")
    assert tested == [len(RUNS) - 1]  # one measure: the new run against each other run
    assert after.equals(anova.pair_tests(rows, settings, 7, 500, code="v1"))
    marked = before.assign(randomization_p_value=-1.0)  # a stored row is taken as it is, and only with its code
    assert (anova.pair_tests(rows, settings, 7, 500, stored=marked, code="v1")["randomization_p_value"] == -1).sum() \
        == len(before)
    assert (anova.pair_tests(rows, settings, 7, 500, stored=marked, code="v2")["randomization_p_value"] >= 0).all()


def test_a_measure_that_does_not_vary_gets_nulls() -> None:
    flat = pd.DataFrame([(COLLECTION, run, f"q{j}", "m", "m", None, 0.5) for run in ("x", "y", "z") for j in range(4)],
                        columns=anova.VALUE_COLUMNS)  # fmt: skip
    settings = {COLLECTION: anova.CollectionSettings(0.05, 0.8, 50, (0.05,))}
    pairs = anova.pair_tests(flat, settings, 1)
    assert len(pairs) == 3
    assert pairs[["effect_size", "tukey_hsd_p_value", "randomized_tukey_hsd_p_value", "is_significant"]].isna().all().all()
    tables = anova.anova_tables(flat, settings, pairs)
    nulls = ["f_runs", "p_runs", "residual_variance", "detectable_difference_t", "discriminative_power"]
    assert tables[nulls].isna().all().all() and tables["ss_residual"].iloc[0] == 0
    needed = anova.questions_needed(tables, settings)
    assert needed[["questions_needed_t", "questions_needed_anova"]].isna().all().all()
    assert (anova.letter_rows(pairs)["letters"] == "a").all()
    one_run = flat[flat["run_id"] == "x"]
    assert anova.pair_tests(one_run, settings, 1).empty and anova.anova_tables(one_run, settings, pairs[:0]).empty


def generated_rows() -> pd.DataFrame:
    values = reciprocal_ranks()
    return pd.DataFrame([(COLLECTION, run, f"q{j:02d}", "recip_rank", "recip_rank", None, values[i, j])
                         for i, run in enumerate(RUNS) for j in range(N_QUESTIONS)],
                        columns=anova.VALUE_COLUMNS)  # fmt: skip


def write_runs(folder: Path) -> dict[str, Path]:
    """The generated collection as TREC files: qrels (one relevant doc a question) and a run file per run."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "qrels.txt").write_text("".join(f"q{j:02d} 0 rel 1\n" for j in range(N_QUESTIONS)))
    files = {"qrels": folder / "qrels.txt"}
    for run, ranks in generated_ranks().items():
        lines = []
        for j, rank in enumerate(ranks):
            docs = [f"other{i}" for i in range(9)]
            docs.insert(rank - 1, "rel")
            lines += [f"q{j:02d} Q0 {doc} {i} {20 - i} {run}" for i, doc in enumerate(docs, start=1)]
        files[run] = folder / f"{run}.run"
        files[run].write_text("\n".join(lines) + "\n")
    return files


@pytest.mark.dbt
def test_the_marts_on_the_generated_collection(lesson: Warehouse, tmp_path: Path) -> None:
    warehouse = lesson.copy(tmp_path / "w")
    db = ["--db", str(warehouse.db_path)]
    files = write_runs(tmp_path / "files")
    assert cli(["import", "--collection", COLLECTION, "--qrels", str(files["qrels"]), *db]) == 0
    for run in RUNS:
        assert cli(["import", "--collection", COLLECTION, "--run", str(files[run]), "--run-id", run, *db]) == 0
    assert cli(["settings", "--collection", COLLECTION, "--set", "k_values=10", "--set", "baseline_run_id=c0", *db]) == 0
    result = warehouse.build("--exclude", "tag:lesson_golden")
    assert result.success, result

    values = reciprocal_ranks()
    table = direct_table(values)
    row = warehouse.rows("select ss_runs, df_runs, f_runs, p_runs, ss_residual, df_residual, residual_variance, n_runs, "
                         "n_questions, detectable_difference_t, detectable_difference_anova, n_significant_pairs, "
                         "n_pairs, discriminative_power from measure_anova "
                         "where collection_id = ? and measure_name = 'recip_rank'", [COLLECTION])  # fmt: skip
    assert len(row) == 1
    (ss_runs, df_runs, f_runs, p_runs, ss_residual, df_residual, variance, m, n, detectable_t, detectable_anova,
     significant, n_pairs, discriminative) = row[0]  # fmt: skip
    assert (m, n, df_runs, df_residual, n_pairs) == (12, N_QUESTIONS, 11, 11 * (N_QUESTIONS - 1), 66)
    got = (ss_runs, f_runs, p_runs, ss_residual, variance)
    assert got == pytest.approx(tuple(table[name] for name in ("ss_runs", "f_runs", "p_runs", "ss_residual",
                                                               "ms_residual")), rel=1e-9)  # fmt: skip
    assert detectable_t == anova.detectable_difference_t(variance, N_QUESTIONS, 0.05, 0.8)
    assert detectable_anova == anova.detectable_difference_anova(variance, 12, N_QUESTIONS, 0.05, 0.8)
    assert significant == 3 * 16 and discriminative == 48 / 66  # every pair across tiers, none within one

    pairs = warehouse.rows("select run_id, other_run_id, mean_difference, tukey_hsd_p_value, "
                           "randomized_tukey_hsd_p_value, difference_ci_low, difference_ci_high from run_pair_tests "
                           "where collection_id = ? and measure_name = 'recip_rank' order by 1, 2", [COLLECTION])  # fmt: skip
    assert len(pairs) == 66
    means = values.mean(axis=1)
    expected = direct_randomized_tukey(values, 1000, 20261202)
    index = {run: i for i, run in enumerate(RUNS)}
    for run, other, difference, tukey, randomized, low, high in pairs:
        a, b = index[run], index[other]
        assert difference == pytest.approx(means[a] - means[b], abs=1e-12)
        q = abs(difference) / math.sqrt(table["ms_residual"] / N_QUESTIONS)
        assert tukey == pytest.approx(stats.studentized_range.sf(q, 12, table["df_residual"]), rel=1e-9, abs=1e-15)
        assert randomized == expected[(a, b)]
        if (run, other) != ("a0", "a1"):  # a1 is a0: no t interval from scipy
            interval = stats.ttest_rel(values[a], values[b]).confidence_interval()
            assert (low, high) == pytest.approx((interval.low, interval.high), rel=1e-9)
        else:
            assert low == high == 0

    # every pair carries run_comparison_tests' paired tests: against the baseline c0 they are run_comparisons'
    # (unadjusted; the two-sided p-values do not change with the pair's order)
    versus = warehouse.rows(
        "select pairs.wins, pairs.ties, pairs.losses, pairs.t_p_value, pairs.randomization_p_value, "
        "abs(pairs.paired_effect_size), comparisons.wins, comparisons.ties, comparisons.losses, "
        "comparisons.t_p_value, comparisons.randomization_p_value, abs(comparisons.effect_size), "
        "pairs.run_id = comparisons.run_id from run_pair_tests as pairs inner join run_comparisons as comparisons "
        "on pairs.collection_id = comparisons.collection_id and pairs.measure_name = comparisons.measure_name "
        "and comparisons.baseline_run_id = 'c0' and ((pairs.run_id = comparisons.run_id and pairs.other_run_id = "
        "'c0') or (pairs.other_run_id = comparisons.run_id and pairs.run_id = 'c0')) where pairs.collection_id = ?",
        [COLLECTION])  # fmt: skip
    assert len(versus) >= 11 * 10
    for row in versus:
        same_order = row[12]
        wins, ties, losses = row[0:3] if same_order else (row[2], row[1], row[0])
        assert (wins, ties, losses, *row[3:5]) == row[6:11], row
        assert row[5] == row[11] or row[5] == pytest.approx(row[11], rel=1e-12), row  # d_z: null when no variation

    letters = dict(warehouse.rows("select run_id, letters from run_letter_groups where collection_id = ? "
                                  "and measure_name = 'recip_rank'", [COLLECTION]))  # fmt: skip
    assert {letters[run] for run in RUNS} == {"a", "b", "c"}
    assert all(letters[run] == run[0] for run in RUNS)
    needed = warehouse.rows("select target_difference, questions_needed_t from measure_questions_needed "
                            "where collection_id = ? and measure_name = 'recip_rank' order by 1", [COLLECTION])  # fmt: skip
    assert [difference for difference, _ in needed] == [0.02, 0.05, 0.1]
    for difference, count in needed:
        assert count == anova.questions_needed_t(difference, variance, 0.05, 0.8)
        assert anova.paired_t_power(difference / math.sqrt(2 * variance), count, 0.05) >= 0.8
        assert anova.paired_t_power(difference / math.sqrt(2 * variance), count - 1, 0.05) < 0.8

    # the leaderboard serves NDCG@k's letters; the scorecard shows the groups and the questions needed
    leaderboard = warehouse.rows("select run_id, ndcg_letters from run_leaderboard where collection_id = ? "
                                 "order by run_position", [COLLECTION])  # fmt: skip
    ndcg_letters = dict(warehouse.rows("select run_id, letters from run_letter_groups where collection_id = ? "
                                       "and measure_name = 'ndcg_cut_10'", [COLLECTION]))  # fmt: skip
    assert leaderboard and all(letters == ndcg_letters[run] for run, letters in leaderboard)
    with warehouse.connect() as con:
        lines = scorecard(con).splitlines()
    start = lines.index(f"{COLLECTION}: groups by NDCG@k (runs sharing a letter cannot be told apart: randomized "
                        "Tukey HSD over every pair of runs, alpha 0.05)")  # fmt: skip
    assert [line.split() for line in lines[start + 2 : start + 14]] == [
        [run, ndcg_letters[run]] for run, _ in leaderboard]  # fmt: skip
    (ndcg_variance, detectable), = warehouse.rows(
        "select residual_variance, detectable_difference_t from measure_anova where collection_id = ? "
        "and measure_name = 'ndcg_cut_10'", [COLLECTION])  # fmt: skip
    needs = ", ".join(f"{d:g} needs {anova.questions_needed_t(d, ndcg_variance, 0.05, 0.8)}" for d in (0.02, 0.05, 0.1))
    assert lines[start + 14] == (
        f"{COLLECTION}: {N_QUESTIONS} questions detect a difference of {detectable:.3f} in NDCG@10 at power 0.8 "
        f"(paired t-test, alpha 0.05, residual variance of 12 runs); a difference of {needs} questions")
    with warehouse.connect() as con:  # the report shows the groups and charts the discriminative power
        page, charts = report(con, "test", "now")
    assert f'id="chart-{COLLECTION}-discriminative-power"' in page
    assert any(chart.name == "discriminative-power" and chart.collection_id == COLLECTION for chart in charts)
    for run in RUNS:
        assert (f'<tr class="letters" data-run="{run}"><td class="text">{run}</td><td>{ndcg_letters[run]}</td></tr>'
                in page), run
    assert f"{lines[start + 14]}.</p>" in page


@pytest.mark.parametrize(("setting", "value", "reason"), [
    ("alpha", "1.5", "is not a number between 0 and 1 (exclusive)"),
    ("power", "0", "is not a number between 0 and 1 (exclusive)"),
    ("hsd_permutations", "0", "is not an integer >= 1"),
    ("target_differences", "0.05,-1", "is not a list of positive numbers"),
])  # fmt: skip
def test_bad_settings_are_refused_naming_the_collection_and_key(
    lesson: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str], setting: str, value: str, reason: str
) -> None:
    warehouse = lesson.copy(tmp_path / "w")
    before = warehouse_checksums(warehouse.db_path)
    code = cli(["settings", "--collection", "docent", "--set", f"{setting}={value}", "--db", str(warehouse.db_path)])
    error = capsys.readouterr().err
    assert code == 2 and error.count("\n") == 1
    assert "docent" in error and setting in error and reason in error, error
    assert warehouse_checksums(warehouse.db_path) == before
