"""One row per (collection, run, measure name) averaged over questions: the 95% bootstrap confidence interval
of the run's value, resampling its averaged questions with replacement (scipy.stats.bootstrap's percentile
method, computed here as a matrix product; var bootstrap_resamples resamples, var bootstrap_seed, so that a build is reproducible). One bootstrap
per run covers all its measures at once: each resample draws one set of questions for every measure. The
statistic is the run's aggregation: the mean, or for geometric_mean measures (gm_map) exp of the mean of the
per-question logs. Sums (num_ret, ...) have no interval, and neither has a run of one question.
Computed per run: only the runs this build plans (macros/incremental_runs.sql)."""

import numpy as np
import pandas as pd

from retrieval_metrics.dbt_python import as_relation, fetch, fetch_numbers, planned_rows, to_pandas
from retrieval_metrics.warehouse import sql_literal

COLUMN_TYPES = {"collection_id": "string", "run_id": "string", "measure_name": "string", "ci_low": "double",
                "ci_high": "double"}
BATCH_VALUES = 2_000_000  # values per batch of resamples, as the batch given to scipy.stats.bootstrap before
COUNTS_PER_PRODUCT = 4_000_000  # question counts per matrix product (32 MB)


def intervals(matrix: np.ndarray, geometric: np.ndarray, n_resamples: int, seed: int) -> tuple[np.ndarray, ...]:
    """(low, high) per row of `matrix` (measure names x questions): the percentile bootstrap of
    scipy.stats.bootstrap(method="percentile", vectorized, batch=BATCH_VALUES // matrix.size), with the same
    resamples drawn from the same generator in the same batches (rng.integers(0, n, (batch, n))). Each
    resample's means are computed at once for every measure, as the question counts times the values (one
    matrix product per batch), instead of gathering 10,000 x 45 values per resample: the same intervals up
    to floating-point rounding, a tenth of the time."""
    n = matrix.shape[1]
    rng = np.random.default_rng(seed)
    batch = max(1, BATCH_VALUES // matrix.size)
    chunk = max(batch, COUNTS_PER_PRODUCT // n)  # resamples per matrix product: few, large products
    means, counts = [], []
    for start in range(0, n_resamples, batch):
        size = min(batch, n_resamples - start)
        drawn = rng.integers(0, n, (size, n))  # row r: the questions of resample start + r
        counts.append(np.bincount((np.arange(size)[:, None] * n + drawn).ravel(), minlength=size * n).reshape(size, n))
        if sum(len(c) for c in counts) >= chunk or start + size >= n_resamples:
            means.append(np.concatenate(counts).astype(float) @ matrix.T / n)
            counts = []
    statistic = np.concatenate(means).T  # measures x resamples
    statistic[geometric] = np.exp(statistic[geometric])
    low, high = np.quantile(statistic, [0.025, 0.975], axis=-1)
    return low, high


def model(dbt, session):
    n_resamples = int(dbt.config.get("bootstrap_resamples"))
    seed = int(dbt.config.get("bootstrap_seed"))
    aggregations = to_pandas(dbt.ref("measure_catalog")).set_index("measure")["aggregation"]
    sums = [measure for measure, aggregation in aggregations.items() if aggregation == "sum"]
    materialized = dbt.config.get("materialized")  # read here: dbt gives a Python model the configs its file reads
    plans = lambda: dbt.source("build_state", "run_plans")  # noqa: E731 (no build_state on Spark: read only if used)
    measured = planned_rows(dbt, dbt.ref("question_measures"), plans, materialized).filter("is_averaged")
    if sums:
        measured = measured.filter(f"measure not in ({', '.join(map(sql_literal, sums))})")
    frames = []
    keys = ["collection_id", "run_id"]
    for collection_id, run_id in fetch(measured, keys, keys, distinct=True):
        # One run's values as a (measure names x questions) matrix, both sorted, fetched as numbers only: at
        # 100,000 questions a DataFrame of the run's rows took 3 GB, the matrix 40 MB
        run = measured.filter(f"collection_id = {sql_literal(collection_id)} and run_id = {sql_literal(run_id)}")
        names = fetch(run, ["measure_name", "measure"], ["measure_name"], distinct=True)
        n_questions = len(fetch(run, ["question_id"], ["question_id"], distinct=True))
        if n_questions < 2:
            continue
        values = fetch_numbers(run, "value", ["measure_name", "question_id"])
        assert len(values) == len(names) * n_questions, f"{collection_id}/{run_id}: measures with other questions"
        matrix = values.reshape(len(names), n_questions)
        geometric = np.array([aggregations[measure] == "geometric_mean" for _, measure in names])
        low, high = intervals(matrix, geometric, n_resamples, seed)
        frames.append(pd.DataFrame({"collection_id": collection_id, "run_id": run_id,
                                    "measure_name": [name for name, _ in names], "ci_low": low, "ci_high": high}))
    result = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(COLUMN_TYPES))
    return as_relation(session, result, COLUMN_TYPES)
