"""One row per (collection, automatic judge's qrels version, bootstrap resample, measure name, run) for the
measures the comparison marts compare: the run's total and place on the pairs both graded, with the judge's
grades (from) and with people's (to), over the questions int_judge_question_resamples drew (resample 0: each
question once). What judge_leaderboard_agreement compares.

A resample's total is the sum over questions of n_draws x value, so all resamples at once are one matrix product:
the draws (resamples x questions) times the values (questions x measures, runs and labels). Each value counts in
units of 1e-12, rounded half away from zero (the values are in [0, 1]), so that the totals are exact integers:
the leaderboards and their ties are the same in any order and on any engine. Places: total descending, ties by
run id. (As SQL, a join of every draw with every value and a GROUP BY, this took 9.4 s at 1,000 questions.)"""

import numpy as np
import pandas as pd

from retrieval_metrics.dbt_python import as_relation, to_pandas

COLUMN_TYPES = {"collection_id": "string", "qrels_version": "integer", "resample": "integer",
                "measure_name": "string", "run_id": "string", "value_from": "bigint", "value_to": "bigint",
                "rank_from": "integer", "rank_to": "integer"}  # fmt: skip
LABELS = ["judge", "people"]  # from, to


def model(dbt, session):
    dbt.config(materialized="table")
    draws = to_pandas(dbt.ref("int_judge_question_resamples"))
    values = to_pandas(dbt.ref("int_judge_question_measures"))
    frames = []
    for (collection_id, version), drawn in draws.groupby(["collection_id", "qrels_version"], sort=True):
        measured = values[(values["collection_id"] == collection_id) & (values["qrels_version"] == version)]
        frames.append(leaderboards(collection_id, int(version), drawn, measured))
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(COLUMN_TYPES))
    return as_relation(session, frame, COLUMN_TYPES)


def leaderboards(collection_id: str, version: int, drawn: pd.DataFrame, measured: pd.DataFrame) -> pd.DataFrame:
    """Every resample's leaderboards for one judge's version: `drawn` its rows of int_judge_question_resamples,
    `measured` its rows of int_judge_question_measures."""
    questions = pd.Index(sorted(drawn["question_id"].unique()))
    counts = np.zeros((int(drawn["resample"].max()) + 1, len(questions)), dtype=np.int64)
    counts[drawn["resample"].to_numpy(dtype=np.int64), questions.get_indexer(drawn["question_id"])] = drawn["n_draws"]
    value = measured["value"].to_numpy(dtype=float)
    units = measured.assign(units=np.sign(value) * np.floor(np.abs(value) * 1e12 + 0.5))
    table = units.pivot(index="question_id", columns=["measure_name", "run_id", "labels"], values="units")
    table = table.sort_index(axis=1).reindex(questions)
    measure_names, run_ids, labels = (list(level) for level in table.columns.levels)
    shape = (len(measure_names), len(run_ids), len(LABELS))
    if labels != LABELS or table.shape[1] != np.prod(shape) or table.isna().to_numpy().any():
        raise ValueError(f"{collection_id} version {version}: int_judge_question_measures lacks the value of a "
                         "question, measure, run or labels")  # fmt: skip
    totals = (counts @ table.to_numpy().astype(np.int64)).reshape(len(counts), *shape)
    # places: the runs (in id order) sorted stably by total descending
    ranks = np.argsort(np.argsort(-totals, axis=2, kind="stable"), axis=2, kind="stable") + 1
    n_resamples, n_measures, n_runs = len(counts), len(measure_names), len(run_ids)
    return pd.DataFrame({
        "collection_id": collection_id,
        "qrels_version": version,
        "resample": np.repeat(np.arange(n_resamples), n_measures * n_runs),
        "measure_name": np.tile(np.repeat(np.asarray(measure_names, dtype=object), n_runs), n_resamples),
        "run_id": np.tile(np.asarray(run_ids, dtype=object), n_resamples * n_measures),
        "value_from": totals[..., 0].ravel(),
        "value_to": totals[..., 1].ravel(),
        "rank_from": ranks[..., 0].ravel(),
        "rank_to": ranks[..., 1].ravel(),
    })  # fmt: skip
