"""One row per (collection, automatic judge's qrels version, bootstrap resample, question drawn in it): how many
times the resample drew the question. The resamples every interval of the judges' agreement is taken over
(int_judge_agreement's kappas, judge_leaderboard_agreement's correlations): the collection's bootstrap_resamples
resamples of the Q questions with a pair both graded (int_judge_agreement_pairs), with replacement, drawn as
numpy.random.default_rng(bootstrap_seed).integers(0, Q, (bootstrap_resamples, Q)) over the questions in id
order; resamples are numbered from 1. A Python model only for the draws: the statistics are SQL."""

import numpy as np
import pandas as pd

from retrieval_metrics.dbt_python import as_relation, bootstrap_settings, fetch

COLUMN_TYPES = {"collection_id": "string", "qrels_version": "integer", "resample": "integer",
                "question_id": "string", "n_draws": "integer"}  # fmt: skip


def model(dbt, session):
    dbt.config(materialized="table")
    settings = dbt.ref("int_collection_evaluation_settings")
    keys = ["collection_id", "qrels_version", "question_id"]
    questions = fetch(dbt.ref("int_judge_agreement_pairs"), keys, keys, distinct=True)
    frames = []
    if questions:  # no automatic judge (most builds): nothing more to read
        bootstrap = bootstrap_settings(settings)
        for (collection_id, version), group in pd.DataFrame(questions, columns=keys).groupby(
            ["collection_id", "qrels_version"], sort=True
        ):
            question_ids = sorted(group["question_id"])
            n_resamples, seed = bootstrap[collection_id]
            drawn = np.random.default_rng(seed).integers(0, len(question_ids), (n_resamples, len(question_ids)))
            counts = np.zeros((n_resamples + 1, len(question_ids)), dtype=np.int64)
            counts[0] = 1  # resample 0: every question once
            np.add.at(counts, (np.arange(1, n_resamples + 1)[:, None], drawn), 1)
            resample, question = np.nonzero(counts)
            frames.append(pd.DataFrame({
                "collection_id": collection_id, "qrels_version": int(version), "resample": resample,
                "question_id": np.asarray(question_ids, dtype=object)[question], "n_draws": counts[resample, question],
            }))  # fmt: skip
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(COLUMN_TYPES))
    return as_relation(session, frame, COLUMN_TYPES)
