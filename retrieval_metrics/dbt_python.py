"""Helpers for the project's dbt Python models, on either engine: dbt-duckdb runs them in the dbt process with
DuckDB relations; the Spark target in dbt's Spark session with Spark DataFrames (retrieval_metrics/spark.py).
The models read and write through these functions only, so that the same model code runs on both."""

from __future__ import annotations

from collections.abc import Callable
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
