"""Many runs at once, over the questions they all answer (one collection, one measure name): the two-way ANOVA
of runs x questions without replication, every pair's Tukey HSD p-value (the studentized range) and its
randomized version (Carterette 2012; Sakai 2018, ch. 4), the groups of runs that cannot be told apart (a compact
letter display), and topic set size design (Sakai 2016): the smallest difference n questions detect, and the
questions a named difference needs, for a paired t-test and for the ANOVA over all the runs.

A measure whose values do not vary (residuals within TIE_TOLERANCE) has no F, p-values or effect sizes: nulls.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

TIE_TOLERANCE = 1e-12  # as retrieval_metrics.stats: differences this small are float noise
HSD_BATCH = 1000  # permutations drawn per call of the generator: the draws depend on it
GATHERED_VALUES = 4_000_000  # permuted values per gather (32 MB)


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


def tukey_hsd_p_values(run_means: np.ndarray, table: Anova) -> np.ndarray | None:
    """Tukey's HSD p-value of every pair (pairs() order): the studentized range |mean_i - mean_j| /
    sqrt(MS_residual / n) of m runs with the residual's degrees of freedom (scipy.stats.studentized_range).
    None when the values do not vary."""
    from scipy import stats

    if not table.varies:
        return None
    i, j = pairs(table.n_runs)
    q = np.abs(run_means[i] - run_means[j]) / math.sqrt(table.ms_residual / table.n_questions)
    return np.asarray(stats.studentized_range.sf(q, table.n_runs, table.df_residual), dtype=float)


def hsd_draws(n_runs: int, n_questions: int, n_permutations: int, seed: int) -> np.ndarray:
    """The randomized Tukey HSD's permutations: n_permutations x questions x runs run indices, each question's
    runs shuffled on its own (rng.permuted of arange(n_runs) along the last axis, HSD_BATCH permutations per
    call of np.random.default_rng(seed)). Permutation b gives run r question q's value of run draws[b, q, r]."""
    rng = np.random.default_rng(seed)
    batches = []
    for start in range(0, n_permutations, HSD_BATCH):
        size = min(HSD_BATCH, n_permutations - start)
        batches.append(rng.permuted(np.broadcast_to(np.arange(n_runs), (size, n_questions, n_runs)), axis=-1))
    return np.concatenate(batches)


def permuted_ranges(values: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """For each permutation of `draws` (hsd_draws), the range of the runs' means (largest minus smallest) over the
    permuted `values` (runs x questions)."""
    b, n, m = draws.shape
    by_question = values.T  # questions x runs
    ranges = np.empty(b)
    step = max(1, GATHERED_VALUES // (n * m))
    for start in range(0, b, step):
        part = draws[start : start + step]
        means = by_question[np.arange(n)[None, :, None], part].sum(axis=1) / n  # permutations x runs
        ranges[start : start + step] = means.max(axis=1) - means.min(axis=1)
    return ranges


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


def paired_t_power(effect_size: float, n: float, alpha: float) -> float:
    """The power of a two-sided paired (one-sample) t-test of n pairs at `alpha` for a standardized difference
    `effect_size` (statsmodels' TTestPower)."""
    from scipy import stats

    df = n - 1
    critical = stats.t.isf(alpha / 2, df)
    noncentrality = effect_size * math.sqrt(n)
    power = float(stats.nct.sf(critical, df, noncentrality) + stats.nct.cdf(-critical, df, noncentrality))
    return 1.0 if math.isnan(power) and noncentrality > critical else power  # scipy's nct gives up far out


def anova_power(effect_size: float, n_observations: float, n_groups: int, alpha: float) -> float:
    """The power of a one-way ANOVA F-test of n_groups groups, n_observations in all, at `alpha` for Cohen's f
    `effect_size` (statsmodels' FTestAnovaPower; noncentrality f^2 n_observations)."""
    from scipy import stats

    df_groups, df_error = n_groups - 1, n_observations - n_groups
    critical = stats.f.isf(alpha, df_groups, df_error)
    return float(stats.ncf.sf(critical, df_groups, df_error, effect_size**2 * n_observations))


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
    effect = _solved(lambda d: paired_t_power(d, n, alpha), power, 1e-9, 1.0)
    return effect * math.sqrt(2 * variance)


def questions_needed_t(difference: float, variance: float, alpha: float, power: float) -> int | None:
    """The fewest questions a two-sided paired t-test needs to detect `difference` at `alpha` with `power` (the
    continuous solution, rounded up: statsmodels' TTestPower.solve_power)."""
    if not variance > 0 or not difference > 0:
        return None
    effect = difference / math.sqrt(2 * variance)
    return math.ceil(_solved(lambda n: paired_t_power(effect, n, alpha), power, 2.0 + 1e-9, 64.0) - 1e-9)


def detectable_difference_anova(variance: float, n_runs: int, n: int, alpha: float, power: float) -> float | None:
    """The smallest range of n_runs runs' means (best minus worst) the ANOVA over n questions detects at `alpha`
    with `power` (Sakai 2016: one-way ANOVA, the other runs at the middle; Cohen's f = range / sqrt(2 n_runs
    variance)). None when there are fewer than 2 runs or questions, or the variance is 0."""
    if n < 2 or n_runs < 2 or not variance > 0:
        return None
    effect = _solved(lambda f: anova_power(f, n_runs * n, n_runs, alpha), power, 1e-9, 1.0)
    return effect * math.sqrt(2 * n_runs * variance)


def questions_needed_anova(difference: float, variance: float, n_runs: int, alpha: float, power: float) -> int | None:
    """The fewest questions (per run) the ANOVA over n_runs runs needs to detect a range `difference` at `alpha`
    with `power` (statsmodels' FTestAnovaPower.solve_power's observations over n_runs, rounded up)."""
    if not variance > 0 or not difference > 0 or n_runs < 2:
        return None
    effect = difference / math.sqrt(2 * n_runs * variance)
    observations = _solved(lambda total: anova_power(effect, total, n_runs, alpha), power,
                          2.0 * n_runs, 64.0 * n_runs)
    return math.ceil(observations / n_runs - 1e-9)
