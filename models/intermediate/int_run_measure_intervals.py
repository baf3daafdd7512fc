"""One row per (collection, run, measure name) averaged over questions: the 95% bootstrap confidence interval
of the run's value, resampling its averaged questions with replacement (scipy.stats.bootstrap, percentile
method, var bootstrap_resamples resamples, var bootstrap_seed, so that a build is reproducible). One bootstrap
per run covers all its measures at once: each resample draws one set of questions for every measure. The
statistic is the run's aggregation: the mean, or for geometric_mean measures (gm_map) exp of the mean of the
per-question logs. Sums (num_ret, ...) have no interval, and neither has a run of one question.
Computed per run: only the runs this build plans (macros/incremental_runs.sql)."""

import numpy as np
import pandas as pd

from retrieval_metrics.dbt_python import as_relation, rows_of_planned_runs

COLUMN_TYPES = {"collection_id": "varchar", "run_id": "varchar", "measure_name": "varchar", "ci_low": "double",
                "ci_high": "double"}



def intervals(values: pd.DataFrame, geometric: np.ndarray, n_resamples: int, seed: int) -> tuple[np.ndarray, ...]:
    """(low, high) per row of `values` (measure names x questions)."""
    from scipy import stats  # here, not at the top: importing it costs ~0.6 s

    def statistic(sample: np.ndarray, axis: int) -> np.ndarray:
        means = np.mean(sample, axis=axis)
        means[geometric] = np.exp(means[geometric])
        return means

    matrix = values.to_numpy(dtype=float)
    result = stats.bootstrap(
        (matrix,), statistic, axis=-1, n_resamples=n_resamples, confidence_level=0.95, method="percentile",
        vectorized=True, batch=max(1, 2_000_000 // matrix.size), random_state=np.random.default_rng(seed),
    )  # fmt: skip
    return result.confidence_interval.low, result.confidence_interval.high


def model(dbt, session):
    dbt.config(materialized="incremental")  # per run, as dbt_project.yml says: Python models need it here too
    n_resamples = int(dbt.config.get("bootstrap_resamples"))
    seed = int(dbt.config.get("bootstrap_seed"))
    aggregations = dbt.ref("measure_catalog").df().set_index("measure")["aggregation"]
    measured = rows_of_planned_runs(dbt.ref("question_measures"), dbt.source("build_state", "run_plans"), dbt.this)
    measured = measured[measured["is_averaged"] & measured["measure"].map(aggregations).ne("sum")]
    frames = []
    for (collection_id, run_id), run in measured.groupby(["collection_id", "run_id"], sort=True):
        values = run.pivot(index="measure_name", columns="question_id", values="value")
        values = values.sort_index(axis=0).sort_index(axis=1)
        if values.shape[1] < 2:
            continue
        measures = run.drop_duplicates("measure_name").set_index("measure_name")["measure"].reindex(values.index)
        geometric = (measures.map(aggregations) == "geometric_mean").to_numpy()
        low, high = intervals(values, geometric, n_resamples, seed)
        frames.append(pd.DataFrame({"collection_id": collection_id, "run_id": run_id,
                                    "measure_name": values.index, "ci_low": low, "ci_high": high}))
    result = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(COLUMN_TYPES))
    return as_relation(session, result, COLUMN_TYPES)
