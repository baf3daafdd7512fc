"""One row per (collection, run, baseline, measure name): paired significance of the run against the baseline,
before the multiple-comparison adjustment (run_comparisons adds Holm's across the runs).

Paired over the questions both runs average (question_comparisons). Tests, from scipy:
  - paired t-test: scipy.stats.ttest_rel, two-sided;
  - paired randomization test: scipy.stats.permutation_test on the mean difference, swapping each
    question's two values (a sign flip of its difference), two-sided, with a fixed seed and
    n_permutations resamples; exact (all 2^n flips) when 2^n <= n_permutations.
Effect size: the paired standardized mean difference, mean(differences) / sd(differences) (ddof 1; Cohen's
d_z), null when the differences do not vary.
Computed per run: only the runs whose fingerprint changed (macros/incremental_runs.sql).
"""

from retrieval_metrics.dbt_python import COMPUTED_TYPES, as_relation, to_pandas, runs_to_compute
from retrieval_metrics.stats import COMPARISON_TYPES, compared_groups

KEYS = ["collection_id", "run_id", "baseline_run_id", "measure_name"]


def model(dbt, session):
    n_permutations = int(dbt.config.get("n_permutations"))
    seed = int(dbt.config.get("permutation_seed"))
    incremental = dbt.config.get("materialized") == "incremental"  # read here: dbt passes the configs a file reads
    dbt.ref("int_run_fingerprints"), dbt.ref("question_comparisons")  # its parents (dbt finds them here), read in runs_to_compute
    runs = runs_to_compute(dbt, session, "question_comparisons", incremental)
    paired = to_pandas(runs.rows)
    types = {**{key: "string" for key in KEYS}, "measure": "string", "k": "integer", **COMPARISON_TYPES}
    return as_relation(
        session, runs.with_fingerprints(compared_groups(paired, KEYS, n_permutations, seed)), {**types, **COMPUTED_TYPES}
    )
