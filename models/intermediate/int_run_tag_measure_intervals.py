"""One row per (collection, run, tag, measure name) averaged over questions: the 95% bootstrap interval of the
run's value over the questions of the tag it averages, as int_run_measure_intervals computes it over all of them
(retrieval_metrics.stats.intervals, the same resamples and seed, the tag's questions in question_id order). A tag
with fewer than two such questions has no interval. Only the collections with tags are read.
Computed per run: only the runs whose fingerprint changed (macros/incremental_runs.sql)."""

import pandas as pd

from retrieval_metrics.dbt_python import COMPUTED_TYPES, as_relation, bootstrap_settings, resampled_values, to_pandas, runs_to_compute
from retrieval_metrics.stats import intervals

COLUMN_TYPES = {"collection_id": "string", "run_id": "string", "tag": "string", "measure_name": "string",
                "ci_low": "double", "ci_high": "double"}


def model(dbt, session):
    bootstrap = bootstrap_settings(dbt.ref("int_collection_evaluation_settings"))
    incremental = dbt.config.get("materialized") == "incremental"  # read here: dbt passes the configs a file reads
    dbt.ref("int_run_fingerprints"), dbt.ref("question_measures")  # its parents (dbt finds them here), read in runs_to_compute
    runs = runs_to_compute(dbt, session, "question_measures", incremental)
    dbt.ref("measure_catalog")  # a parent (dbt finds it here), read in resampled_values
    tags = to_pandas(dbt.ref("int_question_tags_unioned"))
    frames = []
    for run in resampled_values(dbt, runs.rows, sorted(set(tags["collection_id"]))):
        position = {question_id: i for i, question_id in enumerate(run.question_ids)}
        for tag, tagged in tags[tags["collection_id"] == run.collection_id].groupby("tag", sort=True):
            columns = sorted(position[question_id] for question_id in tagged["question_id"] if question_id in position)
            if len(columns) < 2:
                continue
            low, high = intervals(run.matrix[:, columns], run.geometric, *bootstrap[run.collection_id])
            frames.append(pd.DataFrame({"collection_id": run.collection_id, "run_id": run.run_id, "tag": tag,
                                        "measure_name": run.measure_names, "ci_low": low, "ci_high": high}))
    result = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(COLUMN_TYPES))
    return as_relation(session, runs.with_fingerprints(result), {**COLUMN_TYPES, **COMPUTED_TYPES})
