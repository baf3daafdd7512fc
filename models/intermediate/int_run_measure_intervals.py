"""One row per (collection, run, measure name) averaged over questions: the 95% bootstrap confidence interval
of the run's value, resampling its averaged questions with replacement (scipy.stats.bootstrap, percentile
method, var bootstrap_resamples resamples, var bootstrap_seed for every interval, so that a build is
reproducible). The statistic is the run's aggregation: the mean, or for geometric_mean measures (gm_map) exp of
the mean of the per-question logs. Sums (num_ret, ...) have no interval. An interval needs two questions."""

import numpy as np
import pandas as pd

KEYS = ["collection_id", "run_id", "measure_name"]


def interval(values: np.ndarray, geometric: bool, n_resamples: int, seed: int) -> tuple[float, float]:
    from scipy import stats  # here, not at the top: importing it costs ~0.6 s

    if len(values) < 2:
        return (np.nan, np.nan)
    if np.ptp(values) == 0:  # every resample has the same mean: scipy would warn and give nan
        value = float(np.exp(values[0]) if geometric else values[0])
        return (value, value)
    statistic = (lambda x, axis: np.exp(np.mean(x, axis=axis))) if geometric else np.mean
    result = stats.bootstrap(
        (values,), statistic, n_resamples=n_resamples, confidence_level=0.95, method="percentile",
        vectorized=True, batch=max(1, 10_000_000 // len(values)), random_state=np.random.default_rng(seed),
    )  # fmt: skip
    return (float(result.confidence_interval.low), float(result.confidence_interval.high))


def model(dbt, session):
    dbt.config(materialized="table")
    n_resamples = int(dbt.config.get("bootstrap_resamples"))
    seed = int(dbt.config.get("bootstrap_seed"))
    aggregations = dbt.ref("measure_catalog").df().set_index("measure")["aggregation"]
    measured = dbt.ref("question_measures").df()
    measured = measured[measured["is_averaged"] & measured["measure"].map(aggregations).ne("sum")]
    measured = measured.sort_values([*KEYS, "question_id"], kind="mergesort")
    rows = []
    for (collection_id, run_id, measure_name), group in measured.groupby(KEYS, sort=True):
        geometric = aggregations[group["measure"].iloc[0]] == "geometric_mean"
        low, high = interval(group["value"].to_numpy(dtype=float), geometric, n_resamples, seed)
        rows.append((collection_id, run_id, measure_name, low, high))
    result = pd.DataFrame(rows, columns=[*KEYS, "ci_low", "ci_high"])
    return result.astype({"ci_low": "float64", "ci_high": "float64"})
