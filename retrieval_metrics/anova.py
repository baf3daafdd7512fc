"""Many runs at once, over the questions they all answer (one collection, one measure name): the two-way ANOVA
of runs x questions without replication, every pair's Tukey HSD p-value (the studentized range) and its
randomized version (Carterette 2012; Sakai 2018, ch. 4), the groups of runs that cannot be told apart (a compact
letter display), and topic set size design (Sakai 2016): the smallest difference n questions detect, and the
questions a named difference needs, for a paired t-test and for the ANOVA over all the runs.

A measure whose values do not vary (residuals within TIE_TOLERANCE) has no F, p-values or effect sizes: nulls.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

TIE_TOLERANCE = 1e-12  # as retrieval_metrics.stats: differences this small are float noise
GATHERED_VALUES = 4_000_000  # permuted values per chunk of permutations (32 MB of run indices)
SPLIT_FROM = 300  # distinct studentized ranges from which they are split among processes (a child starts in ~1 s)
# a child's share of studentized_range_sf: reads k, df and float64 q values, writes float64 p-values
_SF_CHILD = ("import sys, numpy as np; from scipy import stats; k, df = int(sys.argv[1]), float(sys.argv[2]); "
             "q = np.frombuffer(sys.stdin.buffer.read()); "
             "sys.stdout.buffer.write(np.asarray(stats.studentized_range.sf(q, k, df), dtype=float).tobytes())")


@dataclass(frozen=True)
class Anova:
    """The two-way ANOVA table of a runs x questions matrix (no replication): sums of squares, degrees of
    freedom, mean squares, and F and p for the runs and the questions against the residual. F and p are None when
    the residual mean square is 0 (the values do not vary beyond the runs' and questions' effects)."""

    n_runs: int
    n_questions: int
    ss_runs: float
    ss_questions: float
    ss_residual: float
    df_runs: int
    df_questions: int
    df_residual: int
    f_runs: float | None
    p_runs: float | None
    f_questions: float | None
    p_questions: float | None

    @property
    def ms_runs(self) -> float:
        return self.ss_runs / self.df_runs

    @property
    def ms_questions(self) -> float:
        return self.ss_questions / self.df_questions

    @property
    def ms_residual(self) -> float:
        return self.ss_residual / self.df_residual

    @property
    def varies(self) -> bool:
        return self.f_runs is not None


def anova(values: np.ndarray) -> Anova:
    """The two-way ANOVA of `values` (runs x questions, at least 2 x 2), as statsmodels' ols("value ~ C(run) +
    C(question)") with anova_lm: SS_runs = n sum (run mean - grand mean)^2, SS_questions = m sum (question mean -
    grand mean)^2, SS_residual = sum (value - run mean - question mean + grand mean)^2."""
    from scipy import stats

    m, n = values.shape
    grand = values.mean()
    run_means, question_means = values.mean(axis=1), values.mean(axis=0)
    residuals = values - run_means[:, None] - question_means[None, :] + grand
    ss_runs = float(n * np.sum((run_means - grand) ** 2))
    ss_questions = float(m * np.sum((question_means - grand) ** 2))
    ss_residual = float(np.sum(residuals**2))
    df_runs, df_questions, df_residual = m - 1, n - 1, (m - 1) * (n - 1)
    f_runs = p_runs = f_questions = p_questions = None
    if np.max(np.abs(residuals)) > TIE_TOLERANCE:
        ms_residual = ss_residual / df_residual
        f_runs = ss_runs / df_runs / ms_residual
        f_questions = ss_questions / df_questions / ms_residual
        p_runs = float(stats.f.sf(f_runs, df_runs, df_residual))
        p_questions = float(stats.f.sf(f_questions, df_questions, df_residual))
    return Anova(m, n, ss_runs, ss_questions, ss_residual, df_runs, df_questions, df_residual,
                 f_runs, p_runs, f_questions, p_questions)  # fmt: skip


def pairs(m: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (i, j), i < j, of m runs, in order (0, 1), (0, 2), ..., (m - 2, m - 1)."""
    i, j = np.triu_indices(m, k=1)
    return i, j


def studentized_ranges(run_means: np.ndarray, table: Anova) -> np.ndarray | None:
    """Every pair's (pairs() order) studentized range |mean_i - mean_j| / sqrt(MS_residual / n); None when the
    values do not vary."""
    if not table.varies:
        return None
    i, j = pairs(table.n_runs)
    return np.abs(run_means[i] - run_means[j]) / math.sqrt(table.ms_residual / table.n_questions)


def studentized_range_sf(q: np.ndarray, k: int, df: int) -> np.ndarray:
    """scipy.stats.studentized_range.sf(q, k, df) of each value, each distinct value once. scipy integrates each
    one numerically (about 10 ms); from SPLIT_FROM distinct values on a machine of several cores, they are shared
    among this process and children running the same scipy on the same float64 values: the same bits."""
    from scipy import stats

    distinct, back = np.unique(q, return_inverse=True)
    shares = np.array_split(distinct, min(os.cpu_count() or 1, 4) if len(distinct) >= SPLIT_FROM else 1)
    children = [subprocess.Popen([sys.executable, "-c", _SF_CHILD, str(k), str(df)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE) for _ in shares[1:]]  # fmt: skip
    for child, share in zip(children, shares[1:], strict=True):
        assert child.stdin is not None
        child.stdin.write(share.astype(float).tobytes())
        child.stdin.close()
    found = [np.asarray(stats.studentized_range.sf(shares[0], k, df), dtype=float)]
    for child, share in zip(children, shares[1:], strict=True):
        assert child.stdout is not None
        values = np.frombuffer(child.stdout.read(), dtype=float)
        if child.wait() != 0 or len(values) != len(share):
            raise RuntimeError(f"studentized_range_sf: a child process failed (exit {child.returncode})")
        found.append(values)
    return np.concatenate(found)[back]


def tukey_hsd_p_values(run_means: np.ndarray, table: Anova) -> np.ndarray | None:
    """Tukey's HSD p-value of every pair (pairs() order): the studentized range of m runs with the residual's
    degrees of freedom (scipy.stats.studentized_range). None when the values do not vary."""
    q = studentized_ranges(run_means, table)
    return None if q is None else studentized_range_sf(q, table.n_runs, table.df_residual)


def hsd_draws(n_runs: int, n_questions: int, n_permutations: int, seed: int) -> Iterator[np.ndarray]:
    """The randomized Tukey HSD's permutations, in chunks (permutations x questions x runs run indices): each
    permutation one call of rng.permuted(an n_questions x n_runs array of arange(n_runs), axis=-1) of
    np.random.default_rng(seed), each question's runs shuffled on its own. Permutation b gives run r, at question
    q, the value of run draws[b, q, r]."""
    rng = np.random.default_rng(seed)
    runs = np.broadcast_to(np.arange(n_runs, dtype=np.int32), (n_questions, n_runs))
    step = max(1, GATHERED_VALUES // (n_questions * n_runs))
    for start in range(0, n_permutations, step):
        yield np.stack([rng.permuted(runs, axis=-1) for _ in range(min(step, n_permutations - start))])


def permuted_ranges(matrices: np.ndarray, n_permutations: int, seed: int) -> np.ndarray:
    """For each measure of `matrices` (measures x runs x questions) and each permutation of hsd_draws (the same
    permutations for every measure), the range of the runs' means (largest minus smallest) over the permuted
    values: measures x permutations. A chunk of permutations is a 0/1 sparse matrix, a row per (permutation, run)
    picking that run's permuted value at each question, times every measure's values: each mean summed one
    question after the other, as a direct loop does, without gathering the permuted values."""
    from scipy import sparse

    count, m, n = matrices.shape
    by_cell = np.ascontiguousarray(matrices.transpose(2, 1, 0).reshape(n * m, count))  # (question, run) x measures
    ranges = []
    for draws in hsd_draws(m, n, n_permutations, seed):  # permutations x questions x runs
        cells = (np.arange(n)[None, :, None] * m + draws).transpose(0, 2, 1).ravel()  # by (permutation, run, question)
        picks = sparse.csr_matrix((np.ones(len(cells)), cells, np.arange(0, len(cells) + 1, n)),
                                  shape=(len(draws) * m, n * m))  # fmt: skip
        means = (picks @ by_cell).reshape(len(draws), m, count) / n
        ranges.append((means.max(axis=1) - means.min(axis=1)).T)
    return np.concatenate(ranges, axis=1) if ranges else np.empty((count, 0))


def randomized_tukey_p_values(run_means: np.ndarray, ranges: np.ndarray) -> np.ndarray:
    """The randomized Tukey HSD p-value of every pair (pairs() order): the share of permutations whose range of
    run means is at least the pair's |difference| (a range within TIE_TOLERANCE below it counts)."""
    i, j = pairs(len(run_means))
    observed = np.abs(run_means[i] - run_means[j])
    ordered = np.sort(ranges)
    below = np.searchsorted(ordered, observed - TIE_TOLERANCE, side="left")
    return (len(ranges) - below) / len(ranges)


def letter_name(index: int) -> str:
    """a, b, ..., z, aa, ab, ... (as spreadsheet columns, lower case)."""
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(97 + rest) + name
    return name


def letter_groups(run_means: np.ndarray, significant: np.ndarray) -> list[str]:
    """The compact letter display of m runs (Piepho's insert-and-absorb, 2004): runs sharing a letter are not
    significantly different (`significant`: one bool per pair, pairs() order), every pair that is differs in its
    letters. The groups are the maximal sets of runs no two of which differ; lettered a, b, ... by their best
    mean (higher first), then by their first run. Each run's letters, in order."""
    m = len(run_means)
    columns: list[frozenset[int]] = [frozenset(range(m))]
    for i, j, differ in zip(*pairs(m), significant, strict=True):
        if not differ:
            continue
        split = []
        for column in columns:
            split.extend([column - {i}, column - {j}] if i in column and j in column else [column])
        kept = sorted(set(split), key=len, reverse=True)
        columns = [c for n, c in enumerate(kept) if c and not any(c < other for other in kept[:n])]
    order = sorted(columns, key=lambda c: (-max(run_means[r] for r in c), min(c), sorted(c)))
    letters = [""] * m
    for index, column in enumerate(order):
        for run in column:
            letters[run] += letter_name(index)
    return letters


def paired_t_powers(effect_size: np.ndarray, n: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """The power of a two-sided paired (one-sample) t-test of n pairs at `alpha` for a standardized difference
    `effect_size` (statsmodels' TTestPower), elementwise, in one call of scipy's noncentral t. Where it gives no
    number (few questions, a large effect), the same probability by integration over the chi-square: E[Phi(nc - c
    sqrt(V / df)) + Phi(-nc - c sqrt(V / df))], V ~ chi2(df)."""
    from scipy import integrate, special, stats

    effect_size, n, alpha = (np.asarray(x, dtype=float) for x in (effect_size, n, alpha))
    df = n - 1
    critical = stats.t.isf(alpha / 2, df)
    noncentrality = effect_size * np.sqrt(n)
    power = stats.nct.sf(critical, df, noncentrality) + stats.nct.cdf(-critical, df, noncentrality)
    for i in np.flatnonzero(np.isnan(power)):
        c, nc, d = float(critical[i]), float(noncentrality[i]), float(df[i])
        g, p = special.gammaln(d / 2.0), (np.log(2) * d) / 2.0  # the constant terms of chi2's log density

        def density(v: float, c: float = c, nc: float = nc, d: float = d, g: float = g, p: float = p) -> float:
            # scipy's norm.cdf and chi2.pdf as they compute them (ndtr; the exp of chi2's log density, its terms in
            # scipy's order; 0 off its open support), without their argument checks: quad calls it hundreds of times
            if not 0.0 < v < math.inf:
                return 0.0
            scale = c * math.sqrt(v / d)
            chi2_density = np.exp(special.xlogy(d / 2.0 - 1, v) - v / 2.0 - g - p)
            return float((special.ndtr(nc - scale) + special.ndtr(-nc - scale)) * chi2_density)

        power[i] = integrate.quad(density, 0, np.inf, limit=200)[0]
    return np.minimum(1.0, power)


def paired_t_power(effect_size: float, n: float, alpha: float) -> float:
    """paired_t_powers of one test."""
    return float(paired_t_powers(np.array([effect_size]), np.array([n]), np.array([alpha]))[0])


def anova_powers(effect_size: np.ndarray, n_observations: np.ndarray, n_groups: np.ndarray,
                 alpha: np.ndarray) -> np.ndarray:  # fmt: skip
    """The power of a one-way ANOVA F-test of n_groups groups, n_observations in all, at `alpha` for Cohen's f
    `effect_size` (statsmodels' FTestAnovaPower; noncentrality f^2 n_observations), elementwise."""
    from scipy import stats

    arguments = (effect_size, n_observations, n_groups, alpha)
    effect_size, n_observations, n_groups, alpha = (np.asarray(x, dtype=float) for x in arguments)
    df_groups, df_error = n_groups - 1, n_observations - n_groups
    critical = stats.f.isf(alpha, df_groups, df_error)
    power = stats.ncf.sf(critical, df_groups, df_error, effect_size**2 * n_observations)
    return np.where(np.isnan(power), 1.0, power)  # scipy's ncf gives up far out


def anova_power(effect_size: float, n_observations: float, n_groups: int, alpha: float) -> float:
    """anova_powers of one test."""
    return float(anova_powers(np.array([effect_size]), np.array([n_observations]), np.array([n_groups]),
                              np.array([alpha]))[0])  # fmt: skip


def _solved(power_of: object, target: float, low: float, high: float) -> float:
    """The x in [low, high] where power_of(x) (increasing) is `target` (brentq, the interval widened as needed)."""
    from scipy import optimize

    if power_of(low) >= target:  # type: ignore[operator]
        return low
    while power_of(high) < target:  # type: ignore[operator]
        high *= 2
    return float(optimize.brentq(lambda x: power_of(x) - target, low, high, xtol=1e-12, rtol=1e-12))  # type: ignore[operator]


def detectable_difference_t(variance: float, n: int, alpha: float, power: float) -> float | None:
    """The smallest difference between two runs a two-sided paired t-test over n questions detects at `alpha` with
    `power`, the difference's variance taken as 2 `variance` (the residual variance: Sakai 2016). None when
    n < 2 or the variance is 0."""
    if n < 2 or not variance > 0:
        return None
    return detectable_effect_t(n, alpha, power) * math.sqrt(2 * variance)


@functools.cache
def detectable_effect_t(n: int, alpha: float, power: float) -> float:
    """The standardized difference detectable_difference_t solves for (the same for every measure of n questions)."""
    return _solved(lambda d: paired_t_power(d, n, alpha), power, 1e-9, 1.0)


def detectable_difference_anova(variance: float, n_runs: int, n: int, alpha: float, power: float) -> float | None:
    """The smallest range of n_runs runs' means (best minus worst) the ANOVA over n questions detects at `alpha`
    with `power` (Sakai 2016: one-way ANOVA, the other runs at the middle; Cohen's f = range / sqrt(2 n_runs
    variance)). None when there are fewer than 2 runs or questions, or the variance is 0."""
    if n < 2 or n_runs < 2 or not variance > 0:
        return None
    return detectable_effect_anova(n_runs, n, alpha, power) * math.sqrt(2 * n_runs * variance)


@functools.cache
def detectable_effect_anova(n_runs: int, n: int, alpha: float, power: float) -> float:
    """Cohen's f detectable_difference_anova solves for (the same for every measure of n_runs runs, n questions)."""
    return _solved(lambda f: anova_power(f, n_runs * n, n_runs, alpha), power, 1e-9, 1.0)


def fewest(power_of: Callable[[np.ndarray, np.ndarray], np.ndarray], target: np.ndarray, low: int) -> np.ndarray:
    """For each i, the least integer n >= low with power_of(i, n) >= target[i] (increasing in n): the continuous
    solution of statsmodels' solve_power, rounded up. power_of takes arrays of i and n: every search steps at
    once, by doubling, then bisection."""
    everyone = np.arange(len(target))
    lows = np.full(len(target), low, dtype=np.int64)
    highs = np.where(power_of(everyone, lows) >= target, lows, 2 * lows)
    pending = everyone[highs > lows]
    while pending.size:  # until power_of(high) >= target
        short = power_of(pending, highs[pending]) < target[pending]
        pending = pending[short]
        lows[pending], highs[pending] = highs[pending], 2 * highs[pending]
    pending = everyone[highs - lows > 1]
    while pending.size:  # power_of(low) < target <= power_of(high)
        middle = (lows[pending] + highs[pending]) // 2
        short = power_of(pending, middle) < target[pending]
        lows[pending[short]], highs[pending[~short]] = middle[short], middle[~short]
        pending = pending[highs[pending] - lows[pending] > 1]
    return highs


def questions_needed_ts(difference: np.ndarray, variance: np.ndarray, alpha: np.ndarray,
                        power: np.ndarray) -> np.ndarray:  # fmt: skip
    """The fewest questions a two-sided paired t-test needs to detect `difference` at `alpha` with `power` (at least
    2; statsmodels' TTestPower.solve_power, rounded up), elementwise; nan where the variance or the difference is
    not above 0."""
    difference, variance, alpha, power = (np.asarray(x, dtype=float) for x in (difference, variance, alpha, power))
    needed = np.full(len(difference), np.nan)
    solvable = np.flatnonzero((variance > 0) & (difference > 0))
    effect, at = difference[solvable] / np.sqrt(2 * variance[solvable]), alpha[solvable]
    needed[solvable] = fewest(lambda i, n: paired_t_powers(effect[i], n, at[i]), power[solvable], 2)
    return needed


def questions_needed_anovas(difference: np.ndarray, variance: np.ndarray, n_runs: np.ndarray, alpha: np.ndarray,
                            power: np.ndarray) -> np.ndarray:  # fmt: skip
    """The fewest questions (per run) the ANOVA over n_runs runs needs to detect a range `difference` at `alpha`
    with `power` (statsmodels' FTestAnovaPower.solve_power's observations over n_runs, rounded up), elementwise;
    nan where the variance or the difference is not above 0, or there are fewer than 2 runs."""
    difference, variance, n_runs, alpha, power = (np.asarray(x, dtype=float)
                                                  for x in (difference, variance, n_runs, alpha, power))  # fmt: skip
    needed = np.full(len(difference), np.nan)
    solvable = np.flatnonzero((variance > 0) & (difference > 0) & (n_runs >= 2))
    m, at = n_runs[solvable], alpha[solvable]
    effect = difference[solvable] / np.sqrt(2 * m * variance[solvable])
    needed[solvable] = fewest(lambda i, n: anova_powers(effect[i], m[i] * n, m[i], at[i]), power[solvable], 2)
    return needed


def questions_needed_t(difference: float, variance: float, alpha: float, power: float) -> int | None:
    """questions_needed_ts of one difference (None: not solvable)."""
    needed = questions_needed_ts(np.array([difference]), np.array([variance]), np.array([alpha]), np.array([power]))
    return None if np.isnan(needed[0]) else int(needed[0])


def questions_needed_anova(difference: float, variance: float, n_runs: int, alpha: float, power: float) -> int | None:
    """questions_needed_anovas of one difference (None: not solvable)."""
    needed = questions_needed_anovas(np.array([difference]), np.array([variance]), np.array([n_runs]),
                                     np.array([alpha]), np.array([power]))  # fmt: skip
    return None if np.isnan(needed[0]) else int(needed[0])


# the columns of run_pair_tests, measure_anova, run_letter_groups and measure_questions_needed, with their SQL types
KEY_TYPES = {"collection_id": "string", "measure_name": "string", "measure": "string", "k": "integer"}
PAIR_TYPES = {**KEY_TYPES, "run_id": "string", "other_run_id": "string", "n_runs": "integer",
              "n_questions": "integer", "run_mean": "double", "other_run_mean": "double",
              "mean_difference": "double", "difference_ci_low": "double", "difference_ci_high": "double",
              "effect_size": "double", "tukey_hsd_p_value": "double", "randomized_tukey_hsd_p_value": "double",
              "hsd_permutations": "integer", "alpha": "double", "is_significant": "boolean",
              "wins": "integer", "ties": "integer", "losses": "integer", "paired_effect_size": "double",
              "t_statistic": "double", "t_p_value": "double", "randomization_p_value": "double",
              "n_permutations": "bigint", "is_exact_randomization": "boolean",
              "pair_fingerprint": "string"}  # fmt: skip
COMPARED = ["difference_ci_low", "difference_ci_high", "wins", "ties", "losses", "paired_effect_size", "t_statistic",
            "t_p_value", "randomization_p_value", "n_permutations", "is_exact_randomization"]  # run_comparison_tests'
# interval and tests, for every pair
ANOVA_TYPES = {**KEY_TYPES, "n_runs": "integer", "n_questions": "integer",
               **{f"{stat}_{source}": sql_type for source in ("runs", "questions")
                  for stat, sql_type in (("ss", "double"), ("df", "integer"), ("ms", "double"), ("f", "double"),
                                         ("p", "double"))},
               "ss_residual": "double", "df_residual": "integer", "residual_variance": "double", "alpha": "double",
               "power": "double", "detectable_difference_t": "double", "detectable_difference_anova": "double",
               "n_pairs": "integer", "n_significant_pairs": "integer",
               "discriminative_power": "double"}  # fmt: skip
LETTER_TYPES = {**KEY_TYPES, "run_id": "string", "n_runs": "integer", "n_questions": "integer",
                "run_mean": "double", "mean_rank": "integer", "letters": "string", "alpha": "double"}  # fmt: skip
NEEDED_TYPES = {**KEY_TYPES, "target_difference": "double", "n_runs": "integer", "n_questions": "integer",
                "residual_variance": "double", "alpha": "double", "power": "double",
                "questions_needed_t": "integer", "questions_needed_anova": "integer"}  # fmt: skip


@dataclass(frozen=True)
class Family:
    """The runs of one collection compared on one measure name over the questions they all average: their
    values (runs x questions, runs and questions sorted by id) and the two-way ANOVA of them."""

    collection_id: str
    measure_name: str
    measure: str
    k: int | None
    run_ids: list[str]
    question_ids: list[str]
    values: np.ndarray
    table: Anova

    @property
    def run_means(self) -> np.ndarray:
        return self.values.mean(axis=1)


@dataclass(frozen=True)
class CollectionSettings:
    """A collection's settings for the all-pairs tests (int_collection_settings' rows)."""

    alpha: float
    power: float
    hsd_permutations: int
    target_differences: tuple[float, ...]


def collection_settings(settings: pd.DataFrame) -> dict[str, CollectionSettings]:
    """Each collection's all-pairs settings from int_collection_settings' rows (collection_id, setting, value)."""
    found: dict[str, CollectionSettings] = {}
    for collection_id, rows in settings.groupby("collection_id", sort=True):
        values = rows.groupby("setting")["value"].apply(list).to_dict()
        found[str(collection_id)] = CollectionSettings(
            float(values["alpha"][0]), float(values["power"][0]), int(values["hsd_permutations"][0]),
            tuple(sorted(float(value) for value in values["target_differences"])))  # fmt: skip
    return found


def families(measured: pd.DataFrame) -> Iterator[Family]:
    """The families of `measured` (rows: collection_id, run_id, question_id, measure_name, measure, k, value; the
    averaged questions): per (collection, measure name), the runs over the questions every one of them averages,
    both by id. None for fewer than two runs or two such questions."""
    for collection_id, rows in measured.groupby("collection_id", sort=True, observed=True):
        coded = [pd.factorize(rows[column], sort=True) for column in ("measure_name", "run_id", "question_id")]
        (names, name_ids), (runs, run_ids), (questions, question_ids) = coded
        grid = np.full((len(name_ids), len(run_ids), len(question_ids)), np.nan)  # measure names x runs x questions
        grid[names, runs, questions] = rows["value"].to_numpy(dtype=float)
        firsts = np.unique(names, return_index=True)[1]
        for name, (measure_name, first) in enumerate(zip(name_ids, firsts, strict=True)):
            present = np.flatnonzero(~np.isnan(grid[name]).all(axis=1))  # the runs with values of it
            complete = np.flatnonzero(~np.isnan(grid[name][present]).any(axis=0))  # the questions all of them have
            if len(present) < 2 or len(complete) < 2:
                continue
            values = grid[name][np.ix_(present, complete)]
            k = rows["k"].iloc[first]
            yield Family(str(collection_id), str(measure_name), str(rows["measure"].iloc[first]),
                         None if pd.isna(k) else int(k), [str(r) for r in run_ids[present]],
                         [str(q) for q in question_ids[complete]], values, anova(values))  # fmt: skip


def pair_tests(measured: pd.DataFrame, settings: dict[str, CollectionSettings], seed: int,
               n_permutations: int = 10000, stored: pd.DataFrame | None = None, code: str = "") -> pd.DataFrame:  # fmt: skip
    """run_pair_tests' rows: every pair of runs of every family (run_id before other_run_id by id), with the
    difference of their means (run minus other), the effect size (the difference over sqrt(MS_residual)), Tukey's
    HSD p-value, the randomized Tukey HSD p-value (the collection's hsd_permutations, `seed`; every measure of a
    collection with as many runs and questions sees the same permutations) and whether the randomized p-value is
    below the collection's alpha; and what run_comparison_tests gives the pair, run_id against other_run_id
    (retrieval_metrics.stats.compared, which compared_groups gives it: the difference's 95% paired t interval,
    wins, ties, losses, Cohen's d_z as paired_effect_size, the paired t-test, the paired randomization test with
    `n_permutations` sign flips and `seed`), unadjusted; every pair of a collection's families with as many runs
    and questions at once, from their values matrices. Those paired tests depend on the pair's two value vectors
    only: each row's `pair_fingerprint` hashes them with `n_permutations`, `seed` and `code` (the code behind the
    model), and a pair whose fingerprint is among the `stored` rows (run_pair_tests' earlier rows) takes its tests
    from there, so that a new run computes the paired tests of its own pairs only."""
    from retrieval_metrics.stats import compared

    reusable = {} if stored is None else (
        stored.drop_duplicates("pair_fingerprint").set_index("pair_fingerprint")[COMPARED].to_dict("index"))

    found = list(families(measured))
    rows: list[dict[str, object]] = []
    by_shape: dict[tuple[str, int, int], list[Family]] = {}
    for family in found:
        by_shape.setdefault((family.collection_id, *family.values.shape), []).append(family)
    for (collection_id, m, n), group in by_shape.items():
        own = settings[collection_id]
        ranges = permuted_ranges(np.stack([family.values for family in group]), own.hsd_permutations, seed)
        i, j = pairs(m)
        # every family's studentized ranges (same m runs, same residual df) through scipy at once
        studentized = [studentized_ranges(family.run_means, family.table) for family in group]
        varying = [q for q in studentized if q is not None]
        p_values = iter(np.split(studentized_range_sf(np.concatenate(varying), m, (m - 1) * (n - 1)),
                                 len(varying)) if varying else [])  # fmt: skip
        # and every pair of every family as run_comparison_tests compares a run with its baseline, at once
        run, other = np.concatenate([f.values[i] for f in group]), np.concatenate([f.values[j] for f in group])
        fingerprints = [hashlib.md5(f"{code}|{n_permutations}|{seed}|".encode() + a.tobytes() + b.tobytes()).hexdigest()
                        for a, b in zip(run, other, strict=True)]  # fmt: skip
        new = np.array([key not in reusable for key in fingerprints], dtype=bool)
        run, other = run[new], other[new]
        differences = run - other  # the outcomes' rule of question_comparisons: a win beyond TIE_TOLERANCE
        wins, losses = (differences > TIE_TOLERANCE).sum(axis=1), (differences < -TIE_TOLERANCE).sum(axis=1)
        del differences
        tested = compared(run, other, (wins, n - wins - losses, losses), n_permutations, seed) if new.any() else {}
        del run, other
        computed = np.cumsum(new) - 1  # a new row's place among those computed now
        for position, (family, family_ranges, q) in enumerate(zip(group, ranges, studentized, strict=True)):
            means, table = family.run_means, family.table
            tukey = None if q is None else next(p_values)
            randomized = randomized_tukey_p_values(means, family_ranges)
            if not np.ptp(family.values) > TIE_TOLERANCE:
                randomized = np.full(len(i), np.nan)  # no variance: nulls
            mean_difference = means[i] - means[j]
            effect = mean_difference / math.sqrt(table.ms_residual) if table.varies else np.full(len(i), np.nan)
            for pair in range(len(i)):
                row = position * len(i) + pair
                rows.append({
                    "collection_id": collection_id, "measure_name": family.measure_name, "measure": family.measure,
                    "k": family.k, "run_id": family.run_ids[i[pair]], "other_run_id": family.run_ids[j[pair]],
                    "n_runs": m, "n_questions": n, "run_mean": means[i[pair]], "other_run_mean": means[j[pair]],
                    "mean_difference": mean_difference[pair],
                    "effect_size": effect[pair],
                    "tukey_hsd_p_value": None if tukey is None else tukey[pair],
                    "randomized_tukey_hsd_p_value": randomized[pair], "hsd_permutations": own.hsd_permutations,
                    "alpha": own.alpha,
                    "is_significant": None if np.isnan(randomized[pair]) else bool(randomized[pair] < own.alpha),
                    **({column: tested[column.removeprefix("paired_")][computed[row]] for column in COMPARED}
                       if new[row] else reusable[fingerprints[row]]),
                    "pair_fingerprint": fingerprints[row],
                })  # fmt: skip
    return pd.DataFrame(rows, columns=list(PAIR_TYPES))


def anova_tables(measured: pd.DataFrame, settings: dict[str, CollectionSettings],
                 pair_rows: pd.DataFrame) -> pd.DataFrame:  # fmt: skip
    """measure_anova's rows: per family, the two-way ANOVA table, the residual variance, the smallest
    difference the questions detect at the collection's alpha and power (paired t-test of two runs; ANOVA over
    all the runs: the range of their means), and discriminative power: the share of the pairs (`pair_rows`,
    run_pair_tests') whose randomized Tukey HSD p-value is below alpha."""
    keys = ["collection_id", "measure_name"]
    significant = pair_rows.assign(tested=pair_rows["is_significant"].notna(),
                                   hit=pair_rows["is_significant"].fillna(False).astype(bool))  # fmt: skip
    counts = significant.groupby(keys)[["tested", "hit"]].sum()
    rows = []
    for family in families(measured):
        own, table = settings[family.collection_id], family.table
        variance = table.ms_residual if table.varies else None
        m, n = family.values.shape
        tested, hit = counts.loc[(family.collection_id, family.measure_name)] if (
            family.collection_id, family.measure_name) in counts.index else (0, 0)  # fmt: skip
        rows.append({
            "collection_id": family.collection_id, "measure_name": family.measure_name, "measure": family.measure,
            "k": family.k, "n_runs": m, "n_questions": n,
            "ss_runs": table.ss_runs, "df_runs": table.df_runs, "ms_runs": table.ms_runs, "f_runs": table.f_runs,
            "p_runs": table.p_runs, "ss_questions": table.ss_questions, "df_questions": table.df_questions,
            "ms_questions": table.ms_questions, "f_questions": table.f_questions, "p_questions": table.p_questions,
            "ss_residual": table.ss_residual, "df_residual": table.df_residual, "residual_variance": variance,
            "alpha": own.alpha, "power": own.power,
            "detectable_difference_t": None if variance is None
            else detectable_difference_t(variance, n, own.alpha, own.power),
            "detectable_difference_anova": None if variance is None
            else detectable_difference_anova(variance, m, n, own.alpha, own.power),
            "n_pairs": m * (m - 1) // 2, "n_significant_pairs": int(hit) if tested else None,
            "discriminative_power": hit / tested if tested else None,
        })  # fmt: skip
    return pd.DataFrame(rows, columns=list(ANOVA_TYPES))


def letter_rows(pair_rows: pd.DataFrame) -> pd.DataFrame:
    """run_letter_groups' rows: per family, each run's mean, its rank by mean (1 = best; equal means, equal
    rank) and its letters (letter_groups of the pairs significant under the randomized Tukey HSD at alpha;
    a family whose values do not vary: every run 'a')."""
    rows = []
    for (collection_id, measure_name), family in pair_rows.groupby(["collection_id", "measure_name"], sort=True):
        run_ids = sorted(set(family["run_id"]) | set(family["other_run_id"]))
        index = {run_id: position for position, run_id in enumerate(run_ids)}
        means = np.empty(len(run_ids))
        means[[index[r] for r in family["run_id"]]] = family["run_mean"].to_numpy(dtype=float)
        means[[index[r] for r in family["other_run_id"]]] = family["other_run_mean"].to_numpy(dtype=float)
        significant = np.zeros(len(run_ids) * (len(run_ids) - 1) // 2, dtype=bool)
        i, j = pairs(len(run_ids))
        position = {(a, b): p for p, (a, b) in enumerate(zip(i, j, strict=True))}
        for run_id, other, flag in zip(family["run_id"], family["other_run_id"], family["is_significant"],
                                       strict=True):  # fmt: skip
            significant[position[(index[run_id], index[other])]] = bool(flag) if pd.notna(flag) else False
        letters = letter_groups(means, significant)
        first = family.iloc[0]
        for run, run_id in enumerate(run_ids):
            rows.append({"collection_id": collection_id, "measure_name": measure_name, "measure": first["measure"],
                         "k": first["k"], "run_id": run_id, "n_runs": len(run_ids),
                         "n_questions": first["n_questions"], "run_mean": means[run],
                         "mean_rank": 1 + int(np.sum(means > means[run] + TIE_TOLERANCE)), "letters": letters[run],
                         "alpha": first["alpha"]})  # fmt: skip
    return pd.DataFrame(rows, columns=list(LETTER_TYPES))


def questions_needed(tables: pd.DataFrame, settings: dict[str, CollectionSettings]) -> pd.DataFrame:
    """measure_questions_needed's rows: per family (measure_anova's rows) and each of the collection's
    target_differences, the questions a paired t-test of two runs and the ANOVA over all the runs need to
    detect it at the collection's alpha and power, the residual variance taken as the family's (null: none);
    every row's searches at once."""
    rows = []
    for table in tables.itertuples(index=False):
        own = settings[table.collection_id]
        variance = None if pd.isna(table.residual_variance) else float(table.residual_variance)
        for difference in own.target_differences:
            rows.append({
                "collection_id": table.collection_id, "measure_name": table.measure_name, "measure": table.measure,
                "k": table.k, "target_difference": difference, "n_runs": table.n_runs,
                "n_questions": table.n_questions, "residual_variance": variance, "alpha": own.alpha,
                "power": own.power,
            })  # fmt: skip
    needed = pd.DataFrame(rows, columns=[column for column in NEEDED_TYPES if not column.startswith("questions_")])
    arguments = [needed[column].to_numpy(dtype=float, na_value=np.nan)
                 for column in ("target_difference", "residual_variance", "n_runs", "alpha", "power")]  # fmt: skip
    difference, variance, n_runs, alpha, power = arguments
    for column, counts in (("questions_needed_t", questions_needed_ts(difference, variance, alpha, power)),
                           ("questions_needed_anova", questions_needed_anovas(*arguments))):  # fmt: skip
        needed[column] = pd.array([None if np.isnan(count) else int(count) for count in counts], dtype="Int64")
    return needed[list(NEEDED_TYPES)]


VALUE_COLUMNS = ["collection_id", "run_id", "question_id", "measure_name", "measure", "k", "value"]
TEXT_COLUMNS = VALUE_COLUMNS[:5]  # read as categorical codes (compared_values)


def compared_values(dbt: object, collections: list[str]) -> pd.DataFrame:
    """question_measures' averaged values of the compared measures (measure_catalog.is_compared) in `collections`,
    as pandas: what run_pair_tests and measure_anova read (their files name both parents)."""
    from retrieval_metrics.dbt_python import to_categorical_pandas, to_pandas
    from retrieval_metrics.warehouse import sql_literal

    catalog = to_pandas(dbt.ref("measure_catalog"))  # type: ignore[attr-defined]
    names = catalog.loc[catalog["is_compared"].astype(bool), "measure"]
    listed = ", ".join(sql_literal(str(name)) for name in names) or "null"
    within = ", ".join(sql_literal(collection_id) for collection_id in collections) or "null"
    measured = dbt.ref("question_measures").filter(  # type: ignore[attr-defined]
        f"is_averaged and measure in ({listed}) and collection_id in ({within})")
    return to_categorical_pandas(measured, VALUE_COLUMNS, TEXT_COLUMNS)
