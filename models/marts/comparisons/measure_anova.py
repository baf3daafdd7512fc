"""One row per (collection, measure name): the two-way ANOVA of the collection's runs x the questions they all
average, the residual variance, the smallest difference those questions detect at the collection's alpha and
power (paired t-test; ANOVA over all the runs), and discriminative power: the share of run_pair_tests' pairs
significant under the randomized Tukey HSD (retrieval_metrics/anova.py).
Computed per collection, as run_pair_tests: only the collections whose fingerprint changed."""

from retrieval_metrics.anova import ANOVA_TYPES, anova_tables, collection_settings, compared_values
from retrieval_metrics.dbt_python import COMPUTED_TYPES, as_relation, collections_to_compute, to_pandas
from retrieval_metrics.dbt_python import with_collection_fingerprints


def model(dbt, session):
    incremental = dbt.config.get("materialized") == "incremental"  # read here: dbt passes the configs a file reads
    # its parents (dbt finds them here), read in collections_to_compute and compared_values
    dbt.ref("int_run_fingerprints"), dbt.ref("measure_catalog"), dbt.ref("question_measures")
    types = {**ANOVA_TYPES, **COMPUTED_TYPES}
    collections = collections_to_compute(dbt, session, incremental, types, parents=("run_pair_tests",))
    settings = collection_settings(to_pandas(dbt.ref("int_collection_settings")))
    pairs = to_pandas(dbt.ref("run_pair_tests"))
    pairs = pairs[pairs["collection_id"].isin(collections)]
    tables = anova_tables(compared_values(dbt, sorted(collections)), settings, pairs)
    return as_relation(session, with_collection_fingerprints(tables, collections), types)
