"""The statistics of the per-run Python models, defined once for every slice of questions they are computed
over (a run's averaged questions; the questions of one tag): the percentile bootstrap interval of a run's
values, and the paired tests of a run against its baseline."""

from __future__ import annotations

import numpy as np
import pandas as pd

BATCH_VALUES = 2_000_000  # values per batch of resamples, as the batch given to scipy.stats.bootstrap before
COUNTS_PER_PRODUCT = 4_000_000  # question counts per matrix product (32 MB)


def intervals(matrix: np.ndarray, geometric: np.ndarray, n_resamples: int, seed: int) -> tuple[np.ndarray, ...]:
    """(low, high) per row of `matrix` (measure names x questions): the percentile bootstrap of
    scipy.stats.bootstrap(method="percentile", vectorized, batch=BATCH_VALUES // matrix.size), with the same
    resamples drawn from the same generator in the same batches (rng.integers(0, n, (batch, n))). Each
    resample's means are computed at once for every measure, as the question counts times the values (one
    matrix product per batch), instead of gathering 10,000 x 45 values per resample: the same intervals up
    to floating-point rounding, a tenth of the time."""
    n = matrix.shape[1]
    rng = np.random.default_rng(seed)
    batch = max(1, BATCH_VALUES // matrix.size)
    chunk = max(batch, COUNTS_PER_PRODUCT // n)  # resamples per matrix product: few, large products
    means, counts = [], []
    for start in range(0, n_resamples, batch):
        size = min(batch, n_resamples - start)
        drawn = rng.integers(0, n, (size, n))  # row r: the questions of resample start + r
        counts.append(np.bincount((np.arange(size)[:, None] * n + drawn).ravel(), minlength=size * n).reshape(size, n))
        if sum(len(c) for c in counts) >= chunk or start + size >= n_resamples:
            means.append(np.concatenate(counts).astype(float) @ matrix.T / n)
            counts = []
    statistic = np.concatenate(means).T  # measures x resamples
    statistic[geometric] = np.exp(statistic[geometric])
    low, high = np.quantile(statistic, [0.025, 0.975], axis=-1)
    return low, high


TIE_TOLERANCE = 1e-12  # the tie_tolerance() macro: differences this small are float noise


def mean_difference(run, baseline, axis):
    return np.mean(run - baseline, axis=axis)


def compare(group: pd.DataFrame, n_permutations: int, seed: int) -> dict:
    """A run against its baseline over the paired questions of `group` (question_comparisons' rows, in
    question_id order): wins, ties and losses, the means, the paired t-test (scipy.stats.ttest_rel) and its
    effect size (Cohen's d_z), and the two-sided paired randomization test (scipy.stats.permutation_test, sign
    flips, `n_permutations` resamples with `seed`, exact when 2^n <= n_permutations)."""
    from scipy import stats  # here, not at the top: importing it costs ~0.6 s, and a build may compare nothing

    run = group["run_value"].to_numpy(dtype=float)
    baseline = group["baseline_value"].to_numpy(dtype=float)
    differences = run - baseline
    n = len(differences)
    t_statistic = t_p_value = effect_size = None
    # a t-test (and the effect size) needs the differences to vary by more than float noise
    if n >= 2 and np.ptp(differences) > TIE_TOLERANCE:
        t = stats.ttest_rel(run, baseline)
        t_statistic, t_p_value = float(t.statistic), float(t.pvalue)
        effect_size = float(differences.mean() / differences.std(ddof=1))
    # one question (a tag of one): its two sign flips give the same |mean difference|, so the exact test's p is 1
    # (scipy refuses a single observation)
    randomization_p_value = 1.0 if n == 1 else float(stats.permutation_test(
        (run, baseline),
        mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_permutations,
        alternative="two-sided",
        random_state=np.random.default_rng(seed),
        batch=1000,
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
        "effect_size": effect_size,
        "t_statistic": t_statistic,
        "t_p_value": t_p_value,
        "randomization_p_value": randomization_p_value,
        "n_permutations": 2**n if is_exact else n_permutations,
        "is_exact_randomization": is_exact,
    }


# the columns compare() gives, with their SQL types
COMPARISON_TYPES = {"n_questions": "integer", "wins": "integer", "ties": "integer", "losses": "integer",
                    "run_mean": "double", "baseline_mean": "double", "mean_difference": "double",
                    "effect_size": "double", "t_statistic": "double", "t_p_value": "double",
                    "randomization_p_value": "double", "n_permutations": "bigint", "is_exact_randomization": "boolean"}


def compared_groups(paired: pd.DataFrame, keys: list[str], n_permutations: int, seed: int) -> pd.DataFrame:
    """compare() for each group of `paired` (question_comparisons' rows) by `keys`, each group's questions in
    question_id order: one row per group, with its keys, measure and k."""
    paired = paired.sort_values([*keys, "question_id"], kind="mergesort")
    rows = [
        {**dict(zip(keys, key)), "measure": group["measure"].iloc[0], "k": group["k"].iloc[0],
         **compare(group, n_permutations, seed)}
        for key, group in paired.groupby(keys, sort=True)
    ]
    return pd.DataFrame(rows, columns=[*keys, "measure", "k", *COMPARISON_TYPES])

