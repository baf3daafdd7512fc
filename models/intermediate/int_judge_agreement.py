"""One row per (collection, automatic judge's qrels version) with pairs people graded too: the judge's agreement
with people (retrieval_metrics.stats.agreement): Cohen's kappa on relevant or not at the collection's
relevance_level, the linear and quadratic weighted kappas on the grades, each with a 95% percentile bootstrap
interval over questions (the collection's bootstrap_resamples and bootstrap_seed)."""

import numpy as np
import pandas as pd

from retrieval_metrics.dbt_python import as_relation, bootstrap_settings, fetch
from retrieval_metrics.stats import agreement

KAPPAS = ["kappa", "weighted_kappa_linear", "weighted_kappa_quadratic"]
COLUMN_TYPES = {"collection_id": "string", "qrels_version": "integer", "n_pairs": "integer",
                "n_questions": "integer",
                **{f"{kappa}{part}": "double" for kappa in KAPPAS for part in ("", "_ci_low", "_ci_high")}}


def model(dbt, session):
    dbt.config(materialized="table")
    settings = dbt.ref("int_collection_evaluation_settings")
    pairs = fetch(dbt.ref("int_judge_agreement_pairs"),
                  ["collection_id", "qrels_version", "question_id", "judge_grade", "people_grade"],
                  ["collection_id", "qrels_version", "question_id"])  # fmt: skip
    rows = []
    if not pairs:  # no automatic judge (most builds): nothing more to read
        return as_relation(session, pd.DataFrame(rows, columns=list(COLUMN_TYPES)), COLUMN_TYPES)
    bootstrap = bootstrap_settings(settings)
    levels = dict(fetch(settings, ["collection_id", "relevance_level"], ["collection_id"]))
    frame = pd.DataFrame(pairs, columns=["collection_id", "qrels_version", "question_id", "judge", "people"])
    for (collection_id, version), group in frame.groupby(["collection_id", "qrels_version"], sort=True):
        question_numbers = pd.factorize(group["question_id"], sort=True)[0]
        rows.append({
            "collection_id": collection_id, "qrels_version": int(version), "n_pairs": len(group),
            "n_questions": int(question_numbers.max()) + 1,
            **agreement(question_numbers, group["judge"].to_numpy(dtype=np.int64),
                        group["people"].to_numpy(dtype=np.int64), int(levels[collection_id]),
                        *bootstrap[collection_id]),
        })  # fmt: skip
    return as_relation(session, pd.DataFrame(rows, columns=list(COLUMN_TYPES)), COLUMN_TYPES)
