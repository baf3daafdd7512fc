"""One row per (collection, run, question, Python measure a user defined for the collection): the value of the
user's function (retrieval_metrics/user_measures.py, define_byquery) of the question's judgments (query_id,
doc_id, relevance: int_qrels_unioned) and the run's ranking (query_id, doc_id, score, rank, in rank order:
stg_raw__rankings), as ir_measures' define_byquery calls it. A question the run lacks scores 0, as every measure.
Each function is run from the source the collection's setting stored, not from the user's file. A table, built
once per build, empty when no collection has a Python measure."""

import pandas as pd

from retrieval_metrics.dbt_python import as_relation, to_pandas
from retrieval_metrics.user_measures import as_number, stored_function

COLUMN_TYPES = {"collection_id": "string", "run_id": "string", "question_id": "string", "measure_name": "string",
                "k": "integer", "value": "double"}


def sql_list(values):
    return ", ".join("'" + str(value).replace("'", "''") + "'" for value in values)


def model(dbt, session):
    import json

    dbt.config(materialized="table")
    definitions = to_pandas(dbt.ref("int_collection_settings").filter("setting = 'user_measures' and value != 'none'"))
    python = [(row.collection_id, json.loads(row.value)) for row in definitions.itertuples()]
    python = [(collection_id, definition) for collection_id, definition in python if definition["kind"] == "python"]
    rankings, qrels = dbt.ref("stg_raw__rankings"), dbt.ref("int_qrels_unioned")
    rows = []
    collections = sorted({collection_id for collection_id, _ in python})
    if collections:
        chosen = f"collection_id in ({sql_list(collections)})"
        ranked = to_pandas(rankings.filter(chosen)).sort_values(["collection_id", "run_id", "question_id", "rank"])
        judged = to_pandas(qrels.filter(chosen)).sort_values(["collection_id", "question_id", "doc_id"])
        for collection_id, definition in sorted(python, key=lambda pair: (pair[0], pair[1]["name"])):
            function = stored_function(definition["source"], definition["function"])
            its_qrels = judged[judged["collection_id"] == collection_id]
            its_runs = ranked[ranked["collection_id"] == collection_id]
            questions = sorted(its_qrels["question_id"].unique())
            by_question = {q: frame for q, frame in its_qrels.groupby("question_id", sort=True)}
            for run_id in sorted(its_runs["run_id"].unique()):
                run = its_runs[its_runs["run_id"] == run_id]
                ranked_by_question = {q: frame for q, frame in run.groupby("question_id", sort=True)}
                for question_id in questions:
                    if question_id not in ranked_by_question:
                        value = 0.0
                    else:
                        renamed = {"question_id": "query_id"}
                        question_qrels = by_question[question_id].rename(columns=renamed)[
                            ["query_id", "doc_id", "relevance"]].reset_index(drop=True)
                        question_run = ranked_by_question[question_id].rename(columns=renamed)[
                            ["query_id", "doc_id", "score", "rank"]].reset_index(drop=True)
                        value = as_number(function(question_qrels, question_run))
                        if value is None:
                            raise ValueError(f"user measure {definition['name']} of collection {collection_id}: "
                                             f"not a number on run {run_id}, question {question_id}")
                    rows.append((collection_id, run_id, question_id, definition["name"], None, value))
    frame = pd.DataFrame(rows, columns=list(COLUMN_TYPES))
    return as_relation(session, frame, COLUMN_TYPES)
