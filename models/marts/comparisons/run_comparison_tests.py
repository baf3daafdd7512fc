"""One row per (collection, run, baseline, tag, measure name): paired significance of the run against the baseline,
before the multiple-comparison adjustment (run_comparisons and run_tag_comparisons add Holm's across the runs).
`tag` is null for the tests over all the questions both runs average (question_comparisons), else over the
questions of one tag.

Tests, from scipy (retrieval_metrics.stats.compared_groups, every group in one vectorized pass):
  - paired t-test: scipy.stats.ttest_rel, two-sided;
  - paired randomization test: scipy.stats.permutation_test's draws on the mean difference, swapping each
    question's two values (a sign flip of its difference), two-sided, with a fixed seed and
    n_permutations resamples; exact (all 2^n flips) when 2^n <= n_permutations.
Effect size: the paired standardized mean difference, mean(differences) / sd(differences) (ddof 1; Cohen's
d_z), null when the differences do not vary.
Computed per run: only the runs whose fingerprint changed (macros/incremental_runs.sql).
"""

import pandas as pd

from retrieval_metrics.dbt_python import COMPUTED_TYPES, as_relation, runs_to_compute, to_pandas
from retrieval_metrics.stats import COMPARISON_TYPES, compared_groups

KEYS = ["collection_id", "run_id", "baseline_run_id", "tag", "measure_name"]


def model(dbt, session):
    n_permutations = int(dbt.config.get("n_permutations"))
    seed = int(dbt.config.get("permutation_seed"))
    incremental = dbt.config.get("materialized") == "incremental"  # read here: dbt passes the configs a file reads
    dbt.ref("int_run_fingerprints"), dbt.ref("question_comparisons")  # its parents (dbt finds them here), read in runs_to_compute
    runs = runs_to_compute(dbt, session, "question_comparisons", incremental)
    paired = to_pandas(runs.rows)
    tagged = paired.merge(to_pandas(dbt.ref("int_question_tags_unioned")), on=["collection_id", "question_id"])
    untagged = [key for key in KEYS if key != "tag"]
    every_question = compared_groups(paired, untagged, n_permutations, seed).assign(tag=None)
    by_tag = compared_groups(tagged, KEYS, n_permutations, seed)
    tests = pd.concat([every_question[by_tag.columns], by_tag], ignore_index=True) if len(by_tag) else every_question
    types = {**{key: "string" for key in KEYS}, "measure": "string", "k": "integer", **COMPARISON_TYPES}
    return as_relation(session, runs.with_fingerprints(tests), {**types, **COMPUTED_TYPES})
