"""Helpers for the project's dbt Python models, on either engine: dbt-duckdb runs them in the dbt process with
DuckDB relations; the Spark target in dbt's Spark session with Spark DataFrames (retrieval_metrics/spark.py).
The models read and write through these functions only, so that the same model code runs on both."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from retrieval_metrics.warehouse import sql_literal

def is_spark(relation: Any) -> bool:
    return type(relation).__module__.startswith("pyspark")


def planned_rows(dbt: Any, relation: Any, plans: Callable[[], Any], materialized: str | None) -> Any:
    """The rows of `relation` (with collection_id and run_id) that belong to the runs this build computes for
    the model, as listed in build_state.run_plans (`plans()`): the macro rows_of_planned_runs of
    macros/incremental_runs.sql, for a Python model. Every row when the model is not incremental (Spark: every
    run is computed at every build, and there is no build_state). The model passes its parents and its
    materialization from its own file: dbt finds a Python model's parents, and the configs it reads, there."""
    if materialized != "incremental":
        return relation
    keys = plans().filter(f"model_name = '{dbt.this.identifier}'").project("collection_id, run_id").fetchall()
    if not keys:
        return relation.limit(0)
    quoted = ", ".join("(" + ", ".join(map(sql_literal, key)) + ")" for key in keys)
    return relation.filter(f"(collection_id, run_id) in ({quoted})")


@dataclass(frozen=True)
class RunValues:
    """One run's values of the measures a bootstrap resamples, as a (measure names x questions) matrix, both
    sorted; geometric marks the rows aggregated as a geometric mean (gm_map: their values are logs)."""

    collection_id: str
    run_id: str
    measure_names: list[str]
    question_ids: list[str]
    matrix: np.ndarray
    geometric: np.ndarray


def resampled_values(
    dbt: Any, plans: Callable[[], Any], materialized: str | None, collections: list[str] | None = None
) -> Iterator[RunValues]:
    """The values a bootstrap of each planned run resamples: question_measures' averaged questions, without the
    measures aggregated as sums (num_ret, ...), whose sums have no interval; one run at a time, fetched as numbers
    only (at 100,000 questions a DataFrame of the run's rows took 3 GB, the matrix 40 MB). Only the runs of
    `collections`, if given. The model's file names what this reads (dbt.ref("question_measures"),
    dbt.ref("measure_catalog"), the plans) and passes its materialization, as planned_rows says."""
    aggregations = to_pandas(dbt.ref("measure_catalog")).set_index("measure")["aggregation"]
    measured = planned_rows(dbt, dbt.ref("question_measures"), plans, materialized).filter("is_averaged")
    excluded = [measure for measure, aggregation in aggregations.items() if aggregation == "sum"]
    if excluded:
        measured = measured.filter(f"measure not in ({', '.join(map(sql_literal, excluded))})")
    if collections is not None:
        if not collections:
            return
        measured = measured.filter(f"collection_id in ({', '.join(map(sql_literal, collections))})")
    keys = ["collection_id", "run_id"]
    for collection_id, run_id in fetch(measured, keys, keys, distinct=True):
        run = measured.filter(f"collection_id = {sql_literal(collection_id)} and run_id = {sql_literal(run_id)}")
        names = fetch(run, ["measure_name", "measure"], ["measure_name"], distinct=True)
        question_ids = [question_id for (question_id,) in fetch(run, ["question_id"], ["question_id"], distinct=True)]
        values = fetch_numbers(run, "value", ["measure_name", "question_id"])
        assert len(values) == len(names) * len(question_ids), f"{collection_id}/{run_id}: measures with other questions"
        yield RunValues(
            collection_id, run_id, [name for name, _ in names], question_ids,
            values.reshape(len(names), len(question_ids)),
            np.array([aggregations[measure] == "geometric_mean" for _, measure in names], dtype=bool),
        )


def bootstrap_settings(settings: Any) -> dict[str, tuple[int, int]]:
    """Each collection's bootstrap (resamples, seed), from int_collection_evaluation_settings."""
    rows = fetch(settings, ["collection_id", "bootstrap_resamples", "bootstrap_seed"], ["collection_id"])
    return {collection_id: (int(resamples), int(seed)) for collection_id, resamples, seed in rows}


def fetch(relation: Any, columns: list[str], order_by: list[str], *, distinct: bool = False) -> list[tuple[Any, ...]]:
    """The rows of `relation`'s `columns` (distinct ones, with `distinct`) in `order_by` order, as tuples."""
    if is_spark(relation):
        selected = relation.select(*columns)
        return [tuple(row) for row in (selected.distinct() if distinct else selected).orderBy(*order_by).collect()]
    selected = relation.project(", ".join(columns))
    return (selected.distinct() if distinct else selected).order(", ".join(order_by)).fetchall()


def fetch_numbers(relation: Any, column: str, order_by: list[str]) -> np.ndarray:
    """One numeric column of `relation` in `order_by` order, as a float array, without a Python object per row
    on DuckDB (a run of 100,000 questions has millions of values)."""
    if is_spark(relation):
        return relation.orderBy(*order_by).select(column).toPandas()[column].to_numpy(dtype=float)
    return np.asarray(relation.order(", ".join(order_by)).project(column).fetchnumpy()[column], dtype=float)


def to_pandas(relation: Any) -> pd.DataFrame:
    return relation.toPandas() if is_spark(relation) else relation.df()


def as_relation(session: Any, frame: pd.DataFrame, types: dict[str, str]) -> Any:
    """`frame` as a relation of dbt's own session, its columns cast to the SQL `types` (names both engines read:
    string, integer, double) in that order, so that an empty frame keeps them, and NaN stored as null.
    (dbt-duckdb writes a returned DataFrame through another connection, outside the transaction in which the
    hooks of macros/incremental_runs.sql plan and record runs.)"""
    if is_spark(session):
        schema = ", ".join(f"{column} {sql_type}" for column, sql_type in types.items())
        convert = [int if sql_type in ("integer", "bigint") else _python_value for sql_type in types.values()]
        rows = [
            tuple(None if pd.isna(value) else to(value) for to, value in zip(convert, row, strict=True))
            for row in frame[list(types)].itertuples(index=False, name=None)
        ]
        return session.createDataFrame(rows, schema=schema)
    casts = ", ".join(f"cast({column} as {sql_type}) as {column}" for column, sql_type in types.items())
    return session.from_df(frame).project(casts)


def _python_value(value: Any) -> Any:
    """A numpy scalar as the Python value Spark's createDataFrame accepts."""
    return value.item() if isinstance(value, np.generic) else value
