"""Helpers for the project's dbt Python models (dbt-duckdb runs them in the dbt process, with this package)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from retrieval_metrics.warehouse import sql_literal


def rows_of_planned_runs(relation: Any, plans: Any, this: Any) -> Any:
    """The rows of `relation` (a DuckDB relation with collection_id and run_id) that belong to the runs this
    build computes for the model `this`, as listed in `plans` (build_state.run_plans), as a relation: the macro
    rows_of_planned_runs of macros/incremental_runs.sql, for a Python model."""
    keys = plans.filter(f"model_name = '{this.identifier}'").project("collection_id, run_id").fetchall()
    if not keys:
        return relation.limit(0)
    quoted = ", ".join("(" + ", ".join(map(sql_literal, key)) + ")" for key in keys)
    return relation.filter(f"(collection_id, run_id) in ({quoted})")


def as_relation(session: Any, frame: pd.DataFrame, types: dict[str, str]) -> Any:
    """`frame` as a relation on dbt's own connection (`session`), its columns cast to the SQL `types` in that
    order, so that an empty frame keeps them. (dbt-duckdb writes a returned DataFrame through another
    connection, outside the transaction in which the hooks of macros/incremental_runs.sql plan and record runs.)"""
    casts = ", ".join(f"cast({column} as {sql_type}) as {column}" for column, sql_type in types.items())
    return session.from_df(frame).project(casts)
