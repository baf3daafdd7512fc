"""Helpers for the project's dbt Python models, on either engine: dbt-duckdb runs them in the dbt process with
DuckDB relations; the Spark target in dbt's Spark session with Spark DataFrames (retrieval_metrics/spark.py).
The models read and write through these functions only, so that the same model code runs on both."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from retrieval_metrics.warehouse import sql_literal

def is_spark(relation: Any) -> bool:
    return type(relation).__module__.startswith("pyspark")


@dataclass(frozen=True)
class RunsToCompute:
    """The runs a per-run Python model computes in this build, with their fingerprints for it, and its per-run
    parent's rows of those runs (`rows`). The macros runs_to_compute and delete_stale_runs of
    macros/incremental_runs.sql, for a Python model: its fingerprint of a run is md5 of the run's fingerprint
    (int_run_fingerprints), the code behind the model (code_digest) and the fingerprint its parent's rows carry."""

    fingerprints: dict[tuple[str, str], str]
    rows: Any

    def with_fingerprints(self, frame: pd.DataFrame) -> pd.DataFrame:
        """`frame` (rows of these runs) with the columns that say what computed them; the invocation and its time
        are stamped by the model's post-hook."""
        keys = zip(frame["collection_id"], frame["run_id"], strict=True)
        return frame.assign(fingerprint=[self.fingerprints[key] for key in keys], invocation_id=None, computed_at=None)


COMPUTED_TYPES = {"fingerprint": "string", "invocation_id": "string", "computed_at": "timestamp"}


def runs_to_compute(dbt: Any, session: Any, parent: str, incremental: bool) -> RunsToCompute:
    """What `dbt`'s model computes from its per-run parent `parent` (a model name): every run, but in an
    incremental build those whose stored rows carry another fingerprint or none. The model names its parents
    (dbt.ref) in its own file, where dbt finds them, and passes whether it is incremental (its config)."""
    from retrieval_metrics.dbt_plugin import code_digest

    digest = code_digest(dbt.this.identifier)
    keys = ["collection_id", "run_id"]
    parent_rows = dbt.ref(parent)
    parents = dict(((c, r), f) for c, r, f in fetch(parent_rows, [*keys, "fingerprint"], keys, distinct=True))
    fingerprints = {
        (c, r): hashlib.md5("|".join([f, digest, parents.get((c, r), "none")]).encode()).hexdigest()
        for c, r, f in fetch(dbt.ref("int_run_fingerprints"), [*keys, "fingerprint"], keys)
    }
    if not incremental:
        return RunsToCompute(fingerprints, parent_rows)
    if dbt.is_incremental:
        stored = set(session.sql(f"select distinct collection_id, run_id, fingerprint from {dbt.this}").fetchall())
        fingerprints = {key: f for key, f in fingerprints.items() if (*key, f) not in stored}
    if not fingerprints:
        return RunsToCompute(fingerprints, parent_rows.limit(0))
    quoted = ", ".join("(" + ", ".join(map(sql_literal, key)) + ")" for key in sorted(fingerprints))
    return RunsToCompute(fingerprints, parent_rows.filter(f"(collection_id, run_id) in ({quoted})"))


def collections_to_compute(dbt: Any, session: Any, incremental: bool, types: dict[str, str],
                           parents: tuple[str, ...] = ()) -> dict[str, str]:  # fmt: skip
    """The collections a per-collection Python model (the all-pairs marts: config meta per_collection) computes
    in this build, with their fingerprints for it: every collection with runs, but in an incremental build those
    whose stored rows carry another fingerprint or none. A collection's fingerprint is md5 of its settings across
    runs, each of its runs' fingerprint for the model (runs_to_compute's, with question_measures' fingerprint of
    the run) and the fingerprints its per-collection `parents`' rows carry, as the macro collection_fingerprints
    (macros/incremental_runs.sql) computes it for the post-hook. The model's file names its parents (dbt.ref).
    A stored table of an earlier version stops the build first (refuse_earlier_version)."""
    stored_incrementally = incremental and dbt.is_incremental
    if stored_incrementally:
        refuse_earlier_version(dbt, session, types)
    runs = runs_to_compute(dbt, session, "question_measures", incremental=False).fingerprints
    across = dict(fetch(dbt.ref("int_run_fingerprints"), ["collection_id", "across_runs_hash"], ["collection_id"],
                        distinct=True))  # fmt: skip
    stored_parents = [dict(fetch(dbt.ref(parent), ["collection_id", "fingerprint"], ["collection_id"], distinct=True))
                      for parent in parents]  # fmt: skip
    members: dict[str, list[str]] = {}
    for (collection_id, run_id), fingerprint in sorted(runs.items()):
        members.setdefault(collection_id, []).append(f"{run_id}:{fingerprint}")
    fingerprints = {
        collection_id: hashlib.md5("|".join([across[collection_id], "|".join(items),
                                             *(parent.get(collection_id, "none") for parent in stored_parents)]
                                            ).encode()).hexdigest()  # fmt: skip
        for collection_id, items in members.items()
    }
    if stored_incrementally:
        stored = set(session.sql(f"select distinct collection_id, fingerprint from {dbt.this}").fetchall())
        fingerprints = {key: f for key, f in fingerprints.items() if (key, f) not in stored}
    return fingerprints


def refuse_earlier_version(dbt: Any, session: Any, types: dict[str, str]) -> None:
    """Stop the build when the model's stored table has other columns than `types` (built by an earlier version),
    as dbt stops an incremental SQL model's (on_schema_change: fail), before the model reads a column it lacks."""
    stored_columns = [name for name, *_ in session.sql(f"describe {dbt.this}").fetchall()]
    if stored_columns == list(types):
        return
    missing = ", ".join(column for column in types if column not in stored_columns)
    extra = ", ".join(column for column in stored_columns if column not in types)
    differences = ([f"without {missing}"] if missing else []) + ([f"with {extra}"] if extra else [])
    differs = "; ".join(differences) or "its columns in another order"
    raise RuntimeError(f"{dbt.this} was built by an earlier version of the model ({differs}): build once "
                       "with --full-refresh (docs/incremental.md)")


def with_collection_fingerprints(frame: pd.DataFrame, fingerprints: dict[str, str]) -> pd.DataFrame:
    """`frame` (rows of the collections of `fingerprints`) with the columns that say what computed them."""
    return frame.assign(fingerprint=frame["collection_id"].map(fingerprints), invocation_id=None, computed_at=None)


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
    dbt: Any, question_measures: Any, collections: list[str] | None = None
) -> Iterator[RunValues]:
    """The values a bootstrap of each run resamples: `question_measures`' averaged questions, without the
    measures aggregated as sums (num_ret, ...), whose sums have no interval; one run at a time, fetched as numbers
    only (at 100,000 questions a DataFrame of the run's rows took 3 GB, the matrix 40 MB). Only the runs of
    `collections`, if given. The model's file names what this reads (dbt.ref("measure_catalog") too)."""
    aggregations = to_pandas(dbt.ref("measure_catalog")).set_index("measure")["aggregation"]
    measured = question_measures.filter("is_averaged")
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


def to_categorical_pandas(relation: Any, columns: list[str], text: list[str]) -> pd.DataFrame:
    """`relation`'s `columns` as pandas, the `text` ones as Categoricals whose categories are sorted: on DuckDB
    each text value becomes its category's code in SQL, so that pandas holds one string per distinct value, not
    per row (11 runs x 10,000 questions x 48 measures: 1.8 s and 0.7 GB, not 4.9 s and 2.6 GB)."""
    if is_spark(relation):
        return relation.select(*columns).toPandas().astype({column: "category" for column in text})
    codes = ", ".join(f"{c}_codes as (select {c}, cast(row_number() over (order by {c}) - 1 as integer) as code "
                      f"from (select distinct {c} from read_rows))" for c in text)  # fmt: skip
    coded = relation.query("read_rows", f"with {codes} select " + ", ".join(
        f"{c}_codes.code as {c}" if c in text else f"read_rows.{c}" for c in columns) + " from read_rows " + " ".join(
        f"inner join {c}_codes on read_rows.{c} = {c}_codes.{c}" for c in text)).df()  # fmt: skip
    for column in text:
        categories = [value for (value,) in relation.project(column).distinct().order(column).fetchall()]
        coded[column] = pd.Categorical.from_codes(coded[column].to_numpy(), categories)
    return coded


def as_relation(session: Any, frame: pd.DataFrame, types: dict[str, str]) -> Any:
    """`frame` as a relation of dbt's own session, its columns cast to the SQL `types` (names both engines read:
    string, integer, double) in that order, so that an empty frame keeps them, and NaN stored as null.
"""
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
