"""One row per (collection, run, baseline, tag, measure name): int_run_comparison_tests over the questions of one
tag (the paired t-test, the randomization test and the effect size of retrieval_metrics.stats.compare, the same
permutations and seed), before run_tag_comparisons adjusts the p-values. Only the collections with tags are read.
Computed per run: only the runs whose fingerprint changed (macros/incremental_runs.sql)."""

from retrieval_metrics.dbt_python import COMPUTED_TYPES, as_relation, to_pandas, runs_to_compute
from retrieval_metrics.stats import COMPARISON_TYPES, compared_groups
from retrieval_metrics.warehouse import sql_literal

KEYS = ["collection_id", "run_id", "baseline_run_id", "tag", "measure_name"]


def model(dbt, session):
    n_permutations = int(dbt.config.get("n_permutations"))
    seed = int(dbt.config.get("permutation_seed"))
    incremental = dbt.config.get("materialized") == "incremental"  # read here: dbt passes the configs a file reads
    dbt.ref("int_run_fingerprints"), dbt.ref("question_comparisons")  # its parents (dbt finds them here), read in runs_to_compute
    runs = runs_to_compute(dbt, session, "question_comparisons", incremental)
    tags = to_pandas(dbt.ref("int_question_tags_unioned"))
    paired = runs.rows
    collections = sorted(set(tags["collection_id"])) or [""]  # no tags: no rows read
    paired = to_pandas(paired.filter(f"collection_id in ({', '.join(map(sql_literal, collections))})"))
    tagged = paired.merge(tags, on=["collection_id", "question_id"], how="inner")
    types = {**{key: "string" for key in KEYS}, "measure": "string", "k": "integer", **COMPARISON_TYPES}
    return as_relation(
        session, runs.with_fingerprints(compared_groups(tagged, KEYS, n_permutations, seed)), {**types, **COMPUTED_TYPES}
    )
