"""One row per (collection, measure name, pair of runs): every pair of the collection's runs over the questions
they all average, with the difference of their means and its 95% paired t interval, the effect size over the
two-way ANOVA's residual, Tukey's HSD p-value and the randomized Tukey HSD p-value (retrieval_metrics/anova.py),
and run_comparison_tests' paired tests of the pair (unadjusted).
Computed per collection: a new run changes every pair's family, so a collection is computed whole, and only the
collections whose fingerprint changed (macros/incremental_runs.sql); the paired tests of a pair whose values did
not change are taken from its earlier row (pair_fingerprint)."""

from retrieval_metrics.anova import PAIR_TYPES, collection_settings, compared_values, pair_tests
from retrieval_metrics.dbt_plugin import code_digest
from retrieval_metrics.dbt_python import COMPUTED_TYPES, as_relation, collections_to_compute, to_pandas
from retrieval_metrics.dbt_python import with_collection_fingerprints


def model(dbt, session):
    seed, n_permutations = int(dbt.config.get("permutation_seed")), int(dbt.config.get("n_permutations"))
    incremental = dbt.config.get("materialized") == "incremental"  # read here: dbt passes the configs a file reads
    # its parents (dbt finds them here), read in collections_to_compute and compared_values
    dbt.ref("int_run_fingerprints"), dbt.ref("measure_catalog"), dbt.ref("question_measures")
    types = {**PAIR_TYPES, **COMPUTED_TYPES}
    collections = collections_to_compute(dbt, session, incremental, types)
    settings = collection_settings(to_pandas(dbt.ref("int_collection_settings")))
    stored = session.sql(f"select * from {dbt.this}").df() if incremental and dbt.is_incremental else None
    tests = pair_tests(compared_values(dbt, sorted(collections)), settings, seed, n_permutations, stored,
                       code_digest(dbt.this.identifier))  # fmt: skip
    return as_relation(session, with_collection_fingerprints(tests, collections), types)
