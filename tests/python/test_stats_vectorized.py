"""compared_groups (every group in one pass) against scipy's paired tests run one group at a time, as the
package ran them before: every column equal with ==, on data with ties (discrete values, identical values,
constant differences), one-question groups, groups exact and sampled (2^n on both sides of n_permutations),
groups of many sizes side by side, and in any row order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from retrieval_metrics.stats import COMPARISON_TYPES, TIE_TOLERANCE, compared_groups, sign_flips

KEYS = ["collection_id", "run_id", "baseline_run_id", "measure_name"]


def mean_difference(run, baseline, axis):
    return np.mean(run - baseline, axis=axis)


def reference_compare(group: pd.DataFrame, n_permutations: int, seed: int) -> dict:
    """One group, as the package computed it before: scipy.stats.ttest_rel and scipy.stats.permutation_test."""
    run = group["run_value"].to_numpy(dtype=float)
    baseline = group["baseline_value"].to_numpy(dtype=float)
    differences = run - baseline
    n = len(differences)
    t_statistic = t_p_value = effect_size = None
    low = high = None if n == 1 else float(differences.mean())  # no variation: the interval is the mean
    if n >= 2 and np.ptp(differences) > TIE_TOLERANCE:
        t = stats.ttest_rel(run, baseline)
        t_statistic, t_p_value = float(t.statistic), float(t.pvalue)
        low, high = map(float, t.confidence_interval(0.95))
        effect_size = float(differences.mean() / differences.std(ddof=1))
    randomization_p_value = 1.0 if n == 1 else float(stats.permutation_test(
        (run, baseline), mean_difference, permutation_type="samples", vectorized=True, n_resamples=n_permutations,
        alternative="two-sided", random_state=np.random.default_rng(seed), batch=1000,
    ).pvalue)  # fmt: skip
    is_exact = 2**n <= n_permutations
    return {
        "n_questions": n,
        "wins": int((group["outcome"] == "win").sum()),
        "ties": int((group["outcome"] == "tie").sum()),
        "losses": int((group["outcome"] == "loss").sum()),
        "run_mean": float(run.mean()),
        "baseline_mean": float(baseline.mean()),
        "mean_difference": float(differences.mean()),
        "difference_ci_low": low,
        "difference_ci_high": high,
        "effect_size": effect_size,
        "t_statistic": t_statistic,
        "t_p_value": t_p_value,
        "randomization_p_value": randomization_p_value,
        "n_permutations": 2**n if is_exact else n_permutations,
        "is_exact_randomization": is_exact,
    }


def reference_groups(paired: pd.DataFrame, keys: list[str], n_permutations: int, seed: int) -> pd.DataFrame:
    paired = paired.sort_values([*keys, "question_id"], kind="mergesort")
    rows = [
        {**dict(zip(keys, key)), "measure": group["measure"].iloc[0], "k": group["k"].iloc[0],
         **reference_compare(group, n_permutations, seed)}
        for key, group in paired.groupby(keys, sort=True)
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=[*keys, "measure", "k", *COMPARISON_TYPES])


def paired_rows(sizes: list[int], seed: int) -> pd.DataFrame:
    """question_comparisons-like rows: per group of n questions, values of one of five kinds (tenths: many
    ties; continuous; identical runs; a constant difference; tenths whose differences sum to 0 exactly, so
    that many null statistics are 0 in exact arithmetic and their sign is the rounding's, which depends on the
    order of the sum)."""
    rng = np.random.default_rng(seed)
    rows = []
    for number, n in enumerate(sizes):
        kind = number % 5
        if kind == 0:
            run, baseline = rng.integers(0, 11, n) / 10, rng.integers(0, 11, n) / 10
        elif kind == 1:
            run, baseline = rng.random(n), rng.random(n)
        elif kind == 2:
            run = baseline = rng.integers(0, 4, n) / 3
        elif kind == 3:
            baseline = rng.random(n) * 0.5
            run = baseline + 0.25
        else:
            tenths = rng.integers(-3, 4, n)
            tenths[-1] -= tenths.sum()
            baseline = rng.integers(0, 4, n) / 10 + 0.3
            run = baseline + tenths / 10
        measure = ["P", "ndcg_cut", "map", "recip_rank"][number % 4]
        k = [10, 3, None, None][number % 4]
        for question in range(n):
            difference = run[question] - baseline[question]
            outcome = "tie" if abs(difference) <= TIE_TOLERANCE else ("win" if difference > 0 else "loss")
            rows.append({"collection_id": f"c{number % 2}", "run_id": f"r{number:03d}", "baseline_run_id": "base",
                         "measure_name": f"{measure}_{k}" if k else measure, "question_id": f"q{question:04d}",
                         "measure": measure, "k": k, "run_value": run[question], "baseline_value": baseline[question],
                         "outcome": outcome})  # fmt: skip
    return pd.DataFrame(rows).sample(frac=1, random_state=seed)  # any row order


def assert_same(ours: pd.DataFrame, reference: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(ours, reference, check_exact=True)
    for column in reference.columns:  # and every value with ==, null where the reference is null
        for mine, theirs in zip(ours[column], reference[column], strict=True):
            assert (pd.isna(mine) and pd.isna(theirs)) or mine == theirs, (column, mine, theirs)


@pytest.mark.parametrize(
    "sizes, n_permutations",
    [
        # 2^7 = 128 <= 200 < 256 = 2^8: exact below, drawn above, one-question groups, ties of every kind
        ([1, 1, 2, 2, 3, 5, 7, 7, 7, 7, 7, 8, 8, 8, 8, 8, 9, 12, 12, 12, 12, 12, 30, 30, 30, 30, 30,
          150, 150, 150, 150, 150], 200),
        ([8, 8, 8, 8, 8, 9, 9, 9, 9, 9], 256),  # 2^8 = 256: exact at the boundary, drawn past it
        ([1, 5, 13, 13, 13, 13, 13, 14, 14, 14, 14, 14], 10_000),  # the default: exact up to 13 questions
    ],
)
def test_compared_groups_are_scipys_per_group_tests_bit_for_bit(sizes: list[int], n_permutations: int) -> None:
    paired = paired_rows(sizes, seed=len(sizes))
    ours = compared_groups(paired, KEYS, n_permutations, seed=11)
    assert_same(ours, reference_groups(paired, KEYS, n_permutations, seed=11))
    assert set(ours["is_exact_randomization"]) == {True, False}


def test_two_hundred_topics_with_the_default_permutations_bit_for_bit() -> None:
    """The TREC-sized group (n = 200, 10,000 drawn flips, product rounding near every threshold)."""
    paired = paired_rows([200] * 10, seed=2)
    assert_same(compared_groups(paired, KEYS, 10_000, seed=20261202),
                reference_groups(paired, KEYS, 10_000, seed=20261202))  # fmt: skip


def test_a_tag_s_keys_and_no_rows() -> None:
    """Another key list (the tag models'), and an empty input: the same columns, no rows."""
    paired = paired_rows([4, 9, 9, 1], seed=5)
    paired["tag"] = np.where(paired["question_id"] < "q0004", "a", "b")
    keys = [*KEYS[:3], "tag", "measure_name"]
    assert_same(compared_groups(paired, keys, 100, seed=3), reference_groups(paired, keys, 100, seed=3))
    empty = compared_groups(paired.iloc[:0], keys, 100, seed=3)
    assert list(empty.columns) == [*keys, "measure", "k", *COMPARISON_TYPES] and empty.empty
    assert_same(empty, reference_groups(paired.iloc[:0], keys, 100, seed=3))


def test_sign_flips_are_scipys_resamples() -> None:
    """The drawn flips are those of scipy's null distribution: with differences of distinct powers of two,
    each null statistic names its flips."""
    n, differences = 12, 2.0 ** np.arange(12)
    null = stats.permutation_test(
        (differences, np.zeros(n)), mean_difference, permutation_type="samples", vectorized=True, n_resamples=2_500,
        alternative="two-sided", random_state=np.random.default_rng(9), batch=1000,
    ).null_distribution  # fmt: skip
    flips = sign_flips(n, 2_500, seed=9)
    assert flips.shape == (2_500, n)
    assert np.array_equal(np.where(flips, -differences, differences).sum(axis=1) / n, null)
