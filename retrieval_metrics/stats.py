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
PERMUTATION_BATCH = 1000  # the batch given to scipy.stats.permutation_test before: its draws depend on it
NULL_VALUES = 4_000_000  # null statistics per block of groups, signs per block of resamples (32 MB)
EPS = float(np.finfo(float).eps)

# the columns compared_groups() gives per group, with their SQL types
COMPARISON_TYPES = {"n_questions": "integer", "wins": "integer", "ties": "integer", "losses": "integer",
                    "run_mean": "double", "baseline_mean": "double", "mean_difference": "double",
                    "difference_ci_low": "double", "difference_ci_high": "double", "effect_size": "double",
                    "t_statistic": "double", "t_p_value": "double",
                    "randomization_p_value": "double", "n_permutations": "bigint", "is_exact_randomization": "boolean"}


def compared_groups(paired: pd.DataFrame, keys: list[str], n_permutations: int, seed: int) -> pd.DataFrame:
    """A run against its baseline, for each group of `paired` (question_comparisons' rows) by `keys` over the
    group's questions in question_id order: one row per group, with its keys, measure and k, its wins, ties and
    losses, the means, the 95% interval of the mean difference (scipy.stats.ttest_rel(...).confidence_interval();
    the mean difference itself when the differences vary by no more than TIE_TOLERANCE; null for one question),
    the paired t-test (scipy.stats.ttest_rel) and its effect size (Cohen's d_z, null when the differences vary by
    no more than TIE_TOLERANCE), and the two-sided paired randomization test.

    The randomization test is scipy.stats.permutation_test(permutation_type="samples", the mean difference,
    `n_permutations` resamples, random_state=np.random.default_rng(seed), batch=PERMUTATION_BATCH), exact (all
    2^n sign flips) when 2^n <= n_permutations, computed for every group at once: the sign flips of n
    questions are drawn once, as scipy draws them for any group of n questions, and every such group's null
    statistics come from one matrix product; the few null statistics the product's rounding could place on
    the other side of a threshold are summed again in scipy's order (questions in turn). The same p-values,
    bit for bit. One question: p = 1 (its two flips tie; scipy refuses one observation)."""
    paired = paired.sort_values([*keys, "question_id"], kind="mergesort")
    codes = paired.groupby(keys, sort=True).ngroup().to_numpy()  # a group's rows stay in question_id order
    codes = np.where(np.isnan(codes.astype(float)), -1, codes).astype(np.int64)  # keys with a null: no group
    order = np.argsort(codes, kind="stable")
    order = order[codes[order] >= 0]
    sizes = np.bincount(codes[order], minlength=0)
    starts = np.cumsum(sizes) - sizes
    run = paired["run_value"].to_numpy(dtype=float)[order]
    baseline = paired["baseline_value"].to_numpy(dtype=float)[order]
    outcome = paired["outcome"].to_numpy()[order]
    columns: dict[str, list] = {name: [None] * len(sizes) for name in COMPARISON_TYPES}
    for n in np.unique(sizes):
        groups = np.flatnonzero(sizes == n)
        rows = starts[groups, None] + np.arange(n)  # groups x questions: positions in run and baseline
        outcomes = tuple((outcome[rows] == name).sum(axis=1) for name in ("win", "tie", "loss"))
        for name, values in compared(run[rows], baseline[rows], outcomes, n_permutations, seed).items():
            for group, value in zip(groups, values, strict=True):
                columns[name][group] = value
    first = paired.iloc[order[starts]] if len(sizes) else paired.iloc[:0]
    heads = [first[name].tolist() for name in [*keys, "measure", "k"]]
    frame = [dict(zip([*keys, "measure", "k", *COMPARISON_TYPES], values, strict=True))
             for values in zip(*heads, *columns.values(), strict=True)]  # fmt: skip
    return pd.DataFrame(frame, columns=[*keys, "measure", "k", *COMPARISON_TYPES])


def compared(run: np.ndarray, baseline: np.ndarray, outcomes: tuple[np.ndarray, np.ndarray, np.ndarray],
             n_permutations: int, seed: int) -> dict[str, list]:  # fmt: skip
    """compared_groups' columns but its keys for groups of n questions each: the rows of `run` and `baseline`
    (groups x n), with each group's wins, ties and losses (`outcomes`)."""
    from scipy import stats  # here, not at the top: importing it costs ~0.6 s, and a build may compare nothing

    differences = run - baseline
    g, n = differences.shape
    t_statistic, t_p_value, effect_size = [None] * g, [None] * g, [None] * g
    mean_difference = differences.mean(axis=1)
    low, high = (mean_difference.tolist(), mean_difference.tolist()) if n >= 2 else ([None] * g, [None] * g)
    # a t-test (and the effect size) needs the differences to vary by more than float noise
    varying = np.flatnonzero(np.ptp(differences, axis=1) > TIE_TOLERANCE) if n >= 2 else np.array([], dtype=int)
    if len(varying):
        t = stats.ttest_rel(run[varying], baseline[varying], axis=1)
        interval = t.confidence_interval(0.95)
        d = differences[varying]
        sizes = d.mean(axis=1) / d.std(axis=1, ddof=1)
        for i, group in enumerate(varying):
            t_statistic[group], t_p_value[group] = float(t.statistic[i]), float(t.pvalue[i])
            low[group], high[group] = float(interval.low[i]), float(interval.high[i])
            effect_size[group] = float(sizes[i])
    is_exact = 2**n <= n_permutations
    p_values = [1.0] * g if n == 1 else randomization_p_values(differences, n_permutations, seed).tolist()
    return {
        "n_questions": [n] * g,
        "wins": outcomes[0].tolist(),
        "ties": outcomes[1].tolist(),
        "losses": outcomes[2].tolist(),
        "run_mean": run.mean(axis=1).tolist(),
        "baseline_mean": baseline.mean(axis=1).tolist(),
        "mean_difference": mean_difference.tolist(),
        "difference_ci_low": low,
        "difference_ci_high": high,
        "effect_size": effect_size,
        "t_statistic": t_statistic,
        "t_p_value": t_p_value,
        "randomization_p_value": p_values,
        "n_permutations": [2**n if is_exact else n_permutations] * g,
        "is_exact_randomization": [is_exact] * g,
    }


def sign_flips(n: int, n_permutations: int, seed: int) -> np.ndarray:
    """The resamples scipy.stats.permutation_test(permutation_type="samples", batch=PERMUTATION_BATCH) makes of
    two paired samples of n observations (n >= 2), as a resamples x n matrix of booleans (True: the
    question's two values swapped, its difference negated): all 2^n, in itertools.product's order, when
    2^n <= n_permutations; else n_permutations of them, drawn from np.random.default_rng(seed) as scipy draws
    them (rng.permuted of each question's index pair, batch after batch)."""
    if 2**n <= n_permutations:
        return ((np.arange(2**n)[:, None] >> np.arange(n - 1, -1, -1)) & 1) == 1
    rng = np.random.default_rng(seed)
    batch = min(PERMUTATION_BATCH, n_permutations)
    indices = np.tile(np.arange(2), (batch, n, 1))
    flips = [rng.permuted(indices, axis=-1)[: min(batch, n_permutations - start), :, 0] == 1
             for start in range(0, n_permutations, batch)]  # fmt: skip
    return np.concatenate(flips)


def randomization_p_values(differences: np.ndarray, n_permutations: int, seed: int) -> np.ndarray:
    """The two-sided p-value of scipy.stats.permutation_test for each row of `differences` (groups x n
    questions, n >= 2; run minus baseline), bit for bit.

    scipy's null statistic of a resample is np.mean(run' - baseline', axis=-1) over an array whose questions
    lie along a strided axis: the flipped differences summed one question after the other, then divided by n;
    its observed statistic np.mean(run - baseline) (pairwise summation); a null statistic counts as at least as
    extreme within gamma = |100 eps observed|. Here the null statistics come from a matrix product (another
    summation order); wherever the product's value is closer to a threshold than both orders' rounding error
    bound (4 (n + 2) u sum|d| / n, u = eps / 2, about twice the bound), or not finite, the null statistic is
    summed again in scipy's order."""
    n = differences.shape[1]
    flips = sign_flips(n, n_permutations, seed)
    exact = 2**n <= n_permutations
    resamples, adjustment = len(flips), 0 if exact else 1
    observed = np.array([np.mean(row) for row in differences])  # as scipy: the 1-d mean of each group
    gamma = np.abs(EPS * 100 * observed)
    high, low = observed + gamma, observed - gamma
    margin = 2 * EPS * (n + 2) * np.abs(differences).sum(axis=1) / n
    zero = ~np.any(differences, axis=1)
    less, greater = np.zeros(len(differences), dtype=np.int64), np.zeros(len(differences), dtype=np.int64)
    # blocks of resamples (their signs as floats: resamples x n) and of groups (null statistics: groups x resamples)
    per_block = max(1, min(resamples, NULL_VALUES // n))
    step = max(1, NULL_VALUES // n)  # near null statistics summed again at a time
    for first in range(0, resamples, per_block):
        signs = np.where(flips[first : first + per_block], -1.0, 1.0)
        block = max(1, NULL_VALUES // len(signs))
        for start in range(0, len(differences), block):
            part = slice(start, start + block)
            null = differences[part] @ signs.T / n  # groups x resamples
            room = margin[part, None]
            near = ~(np.abs(null - high[part, None]) > room) | ~(np.abs(null - low[part, None]) > room)
            near &= ~zero[part, None]  # differences all 0: every null statistic is 0 whatever the order
            groups, resample = np.nonzero(near)
            for chunk in range(0, len(groups), step):
                g, r = groups[chunk : chunk + step], resample[chunk : chunk + step]
                flipped = signs[r] * differences[part][g]  # exact: a sign flip
                null[g, r] = np.cumsum(flipped, axis=1)[:, -1] / n  # one question after the other, as scipy sums
            less[part] += np.count_nonzero(null <= high[part, None], axis=1)
            greater[part] += np.count_nonzero(null >= low[part, None], axis=1)
    p_less = (less + adjustment).astype(float) / (resamples + adjustment)
    p_greater = (greater + adjustment).astype(float) / (resamples + adjustment)
    return np.clip(np.minimum(p_less, p_greater) * 2, 0.0, 1.0)
