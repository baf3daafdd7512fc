"""One row per (collection, measure name): the two-way ANOVA of the collection's runs x the questions they all
average, the residual variance, the smallest difference those questions detect at the collection's alpha and
power (paired t-test; ANOVA over all the runs), and discriminative power: the share of run_pair_tests' pairs
significant under the randomized Tukey HSD (retrieval_metrics/anova.py)."""

from retrieval_metrics.anova import ANOVA_TYPES, anova_tables, collection_settings, compared_values
from retrieval_metrics.dbt_python import as_relation, to_pandas


def model(dbt, session):
    dbt.ref("measure_catalog"), dbt.ref("question_measures")  # its parents (dbt finds them here), read in compared_values
    settings = collection_settings(to_pandas(dbt.ref("int_collection_settings")))
    tables = anova_tables(compared_values(dbt), settings, to_pandas(dbt.ref("run_pair_tests")))
    return as_relation(session, tables, ANOVA_TYPES)
