"""One row per (collection, run, baseline, tag, measure name): int_run_comparison_tests over the questions of one
tag (the paired t-test, the randomization test and the effect size of retrieval_metrics.stats.compare, the same
permutations and seed), before run_tag_comparisons adjusts the p-values. Only the collections with tags are read.
Computed per run: only the runs this build plans (macros/incremental_runs.sql)."""

from retrieval_metrics.dbt_python import as_relation, planned_rows, to_pandas
from retrieval_metrics.stats import COMPARISON_TYPES, compared_groups
from retrieval_metrics.warehouse import sql_literal

KEYS = ["collection_id", "run_id", "baseline_run_id", "tag", "measure_name"]


def model(dbt, session):
    n_permutations = int(dbt.config.get("n_permutations"))
    seed = int(dbt.config.get("permutation_seed"))
    materialized = dbt.config.get("materialized")  # read here: dbt gives a Python model the configs its file reads
    plans = lambda: dbt.source("build_state", "run_plans")  # noqa: E731 (no build_state on Spark: read only if used)
    tags = to_pandas(dbt.ref("int_question_tags_unioned"))
    paired = planned_rows(dbt, dbt.ref("question_comparisons"), plans, materialized)
    collections = sorted(set(tags["collection_id"])) or [""]  # no tags: no rows read
    paired = to_pandas(paired.filter(f"collection_id in ({', '.join(map(sql_literal, collections))})"))
    tagged = paired.merge(tags, on=["collection_id", "question_id"], how="inner")
    types = {**{key: "string" for key in KEYS}, "measure": "string", "k": "integer", **COMPARISON_TYPES}
    return as_relation(session, compared_groups(tagged, KEYS, n_permutations, seed), types)
