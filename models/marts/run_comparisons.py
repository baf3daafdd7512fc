"""One row per (collection, run, baseline, measure name): paired significance of the run against the baseline.

Paired over the questions both runs average (question_comparisons). Tests, from scipy:
  - paired t-test: scipy.stats.ttest_rel, two-sided;
  - paired randomization test: scipy.stats.permutation_test on the mean difference, swapping each
    question's two values (a sign flip of its difference), two-sided, with a fixed seed and
    n_permutations resamples; exact (all 2^n flips) when 2^n <= n_permutations.
Effect size: the paired standardized mean difference, mean(differences) / sd(differences) (ddof 1; Cohen's
d_z), null when the differences do not vary.
Holm-Bonferroni then adjusts each test's p-values within one family: the runs compared with the same baseline
on the same measure name (one collection, one measure, one k); measures and cutoffs are not pooled.
"""

import numpy as np
import pandas as pd

KEYS = ["collection_id", "run_id", "baseline_run_id", "measure_name"]
TIE_TOLERANCE = 1e-12  # the tie_tolerance() macro: differences this small are float noise


def mean_difference(run, baseline, axis):
    return np.mean(run - baseline, axis=axis)


def holm(p_values: pd.Series) -> pd.Series:
    """Holm-Bonferroni adjusted p-values (step-down, monotone, capped at 1); missing p-values stay missing."""
    present = p_values.dropna().sort_values(kind="mergesort")
    m = len(present)
    adjusted = np.minimum(1.0, np.maximum.accumulate([(m - i) * p for i, p in enumerate(present)]))
    return pd.Series(adjusted, index=present.index).reindex(p_values.index)


def compare(group: pd.DataFrame, n_permutations: int, seed: int) -> dict:
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
    randomization = stats.permutation_test(
        (run, baseline),
        mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_permutations,
        alternative="two-sided",
        random_state=np.random.default_rng(seed),
        batch=1000,
    )
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
        "randomization_p_value": float(randomization.pvalue),
        "n_permutations": 2**n if is_exact else n_permutations,
        "is_exact_randomization": is_exact,
    }


def model(dbt, session):
    dbt.config(materialized="table")
    n_permutations = int(dbt.config.get("n_permutations"))
    seed = int(dbt.config.get("permutation_seed"))
    paired = dbt.ref("question_comparisons").df().sort_values([*KEYS, "question_id"], kind="mergesort")
    rows = [
        {**dict(zip(KEYS, key)), "measure": group["measure"].iloc[0], "k": group["k"].iloc[0],
         **compare(group, n_permutations, seed)}
        for key, group in paired.groupby(KEYS, sort=True)
    ]
    columns = [*KEYS, "measure", "k", "n_questions", "wins", "ties", "losses", "run_mean", "baseline_mean",
               "mean_difference", "effect_size", "t_statistic", "t_p_value", "randomization_p_value",
               "n_permutations", "is_exact_randomization"]
    result = pd.DataFrame(rows, columns=columns)
    family = ["collection_id", "baseline_run_id", "measure_name"]  # the runs compared with one baseline
    for test in ("t", "randomization"):
        column = f"{test}_p_value"
        result[f"{column}_holm"] = result.groupby(family)[column].transform(holm) if len(result) else []
    types = {"k": "Int32", "n_questions": "int32", "wins": "int32", "ties": "int32", "losses": "int32",
             "n_permutations": "int64", "is_exact_randomization": "bool"}
    floats = [c for c in result.columns
              if c.endswith(("_mean", "_difference", "_size", "_statistic", "_value", "_holm"))]
    return result.astype({**types, **{column: "float64" for column in floats}})
