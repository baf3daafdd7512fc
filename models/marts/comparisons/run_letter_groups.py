"""One row per (collection, measure name, run): the run's mean over the questions every run of the collection
averages, its rank, and its letters: runs that share a letter cannot be told apart by the randomized Tukey HSD at
the collection's alpha (a compact letter display of run_pair_tests; retrieval_metrics/anova.py)."""

from retrieval_metrics.anova import LETTER_TYPES, letter_rows
from retrieval_metrics.dbt_python import as_relation, to_pandas


def model(dbt, session):
    return as_relation(session, letter_rows(to_pandas(dbt.ref("run_pair_tests"))), LETTER_TYPES)
