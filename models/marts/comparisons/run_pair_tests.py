"""One row per (collection, measure name, pair of runs): every pair of the collection's runs over the questions
they all average, with the difference of their means and its 95% paired t interval, the effect size over the
two-way ANOVA's residual, Tukey's HSD p-value and the randomized Tukey HSD p-value (retrieval_metrics/anova.py),
and run_comparison_tests' paired tests of the pair (unadjusted).
Rebuilt whole: a new run changes every pair's family."""

from retrieval_metrics.anova import PAIR_TYPES, collection_settings, compared_values, pair_tests
from retrieval_metrics.dbt_python import as_relation, to_pandas


def model(dbt, session):
    seed, n_permutations = int(dbt.config.get("permutation_seed")), int(dbt.config.get("n_permutations"))
    dbt.ref("measure_catalog"), dbt.ref("question_measures")  # its parents (dbt finds them here), read in compared_values
    settings = collection_settings(to_pandas(dbt.ref("int_collection_settings")))
    return as_relation(session, pair_tests(compared_values(dbt), settings, seed, n_permutations), PAIR_TYPES)
