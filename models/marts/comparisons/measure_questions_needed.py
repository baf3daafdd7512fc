"""One row per (collection, measure name, target difference): the questions a paired t-test of two runs, and the
ANOVA over all the collection's runs, need to detect the difference at the collection's alpha and power, with
measure_anova's residual variance (topic set size design, Sakai 2016; retrieval_metrics/anova.py)."""

from retrieval_metrics.anova import NEEDED_TYPES, collection_settings, questions_needed
from retrieval_metrics.dbt_python import as_relation, to_pandas


def model(dbt, session):
    settings = collection_settings(to_pandas(dbt.ref("int_collection_settings")))
    return as_relation(session, questions_needed(to_pandas(dbt.ref("measure_anova")), settings), NEEDED_TYPES)
