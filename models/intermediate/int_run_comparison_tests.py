"""One row per (collection, run, baseline, measure name): paired significance of the run against the baseline,
before the multiple-comparison adjustment (run_comparisons adds Holm's across the runs).

Paired over the questions both runs average (question_comparisons). Tests, from scipy:
  - paired t-test: scipy.stats.ttest_rel, two-sided;
  - paired randomization test: scipy.stats.permutation_test on the mean difference, swapping each
    question's two values (a sign flip of its difference), two-sided, with a fixed seed and
    n_permutations resamples; exact (all 2^n flips) when 2^n <= n_permutations.
Effect size: the paired standardized mean difference, mean(differences) / sd(differences) (ddof 1; Cohen's
d_z), null when the differences do not vary.
Computed per run: only the runs this build plans (macros/incremental_runs.sql).
"""

import numpy as np
import pandas as pd

from retrieval_metrics.dbt_python import as_relation, planned_rows, to_pandas

KEYS = ["collection_id", "run_id", "baseline_run_id", "measure_name"]
TIE_TOLERANCE = 1e-12  # the tie_tolerance() macro: differences this small are float noise


def mean_difference(run, baseline, axis):
    return np.mean(run - baseline, axis=axis)


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
    n_permutations = int(dbt.config.get("n_permutations"))
    seed = int(dbt.config.get("permutation_seed"))
    materialized = dbt.config.get("materialized")  # read here: dbt gives a Python model the configs its file reads
    plans = lambda: dbt.source("build_state", "run_plans")  # noqa: E731 (no build_state on Spark: read only if used)
    paired = to_pandas(planned_rows(dbt, dbt.ref("question_comparisons"), plans, materialized))
    paired = paired.sort_values([*KEYS, "question_id"], kind="mergesort")
    rows = [
        {**dict(zip(KEYS, key)), "measure": group["measure"].iloc[0], "k": group["k"].iloc[0],
         **compare(group, n_permutations, seed)}
        for key, group in paired.groupby(KEYS, sort=True)
    ]
    types = {**{key: "string" for key in KEYS}, "measure": "string", "k": "integer", "n_questions": "integer",
             "wins": "integer", "ties": "integer", "losses": "integer", "run_mean": "double", "baseline_mean": "double",
             "mean_difference": "double", "effect_size": "double", "t_statistic": "double", "t_p_value": "double",
             "randomization_p_value": "double", "n_permutations": "bigint", "is_exact_randomization": "boolean"}
    return as_relation(session, pd.DataFrame(rows, columns=list(types)), types)
