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

from retrieval_metrics.dbt_python import as_relation, planned_rows, to_pandas
from retrieval_metrics.stats import COMPARISON_TYPES, compared_groups

KEYS = ["collection_id", "run_id", "baseline_run_id", "measure_name"]


def model(dbt, session):
    n_permutations = int(dbt.config.get("n_permutations"))
    seed = int(dbt.config.get("permutation_seed"))
    materialized = dbt.config.get("materialized")  # read here: dbt gives a Python model the configs its file reads
    plans = lambda: dbt.source("build_state", "run_plans")  # noqa: E731 (no build_state on Spark: read only if used)
    paired = to_pandas(planned_rows(dbt, dbt.ref("question_comparisons"), plans, materialized))
    types = {**{key: "string" for key in KEYS}, "measure": "string", "k": "integer", **COMPARISON_TYPES}
    return as_relation(session, compared_groups(paired, KEYS, n_permutations, seed), types)
