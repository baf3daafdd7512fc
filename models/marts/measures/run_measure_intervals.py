"""One row per (collection, run, tag, measure name) averaged over questions: the 95% bootstrap confidence interval
of the run's value, resampling its averaged questions with replacement (retrieval_metrics.stats.intervals:
scipy.stats.bootstrap's percentile method as a matrix product; the collection's bootstrap_resamples resamples
with its bootstrap_seed, so that a build is reproducible). `tag` is null for the interval over all the questions
(run_measures joins it), else the interval over the questions of one tag, in question_id order (run_tag_measures).
One bootstrap per run (and tag) covers all its measures at once: each resample draws one set of questions for
every measure. The statistic is the run's aggregation: the mean, or for geometric_mean measures (gm_map) exp of
the mean of the per-question logs. Sums (num_ret, ...) have no interval, and neither has a set of one question.
Computed per run: only the runs whose fingerprint changed (macros/incremental_runs.sql)."""

import pandas as pd

from retrieval_metrics.dbt_python import COMPUTED_TYPES, as_relation, bootstrap_settings, resampled_values, runs_to_compute, to_pandas
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
    for run in resampled_values(dbt, runs.rows):
        position = {question_id: i for i, question_id in enumerate(run.question_ids)}
        subsets = [(None, list(range(len(run.question_ids))))] + [
            (tag, sorted(position[question_id] for question_id in tagged["question_id"] if question_id in position))
            for tag, tagged in tags[tags["collection_id"] == run.collection_id].groupby("tag", sort=True)
        ]
        for tag, columns in subsets:
            if len(columns) < 2:
                continue
            low, high = intervals(run.matrix[:, columns], run.geometric, *bootstrap[run.collection_id])
            frames.append(pd.DataFrame({"collection_id": run.collection_id, "run_id": run.run_id, "tag": tag,
                                        "measure_name": run.measure_names, "ci_low": low, "ci_high": high}))
    result = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(COLUMN_TYPES))
    return as_relation(session, runs.with_fingerprints(result), {**COLUMN_TYPES, **COMPUTED_TYPES})
