"""Apache Spark as the build's engine (profiles.yml target `spark`, dbt-spark's `session` method; docs/spark.md).

The commands keep writing the raw tables into the DuckDB file, with all their checks and in one transaction;
`publish_raw` then writes them as Parquet files that the Spark target's on-run-start declares as the raw
tables (macros/check_raw_sources.sql), switched to all at once. `main` runs dbt with one more Python-model
submission method, `session`: the model runs in dbt's own Spark session (dbt-spark itself runs Python models
only on Databricks).

    python -m retrieval_metrics.spark build --target spark ...   (what `retrieval-metrics build --target spark` runs)
"""

from __future__ import annotations

import datetime
import decimal
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from retrieval_metrics.warehouse import RAW_SCHEMA_DDL, InputError, shown, sql_literal

# the raw tables the models read, each written as <directory>/raw/<version>/<table>.parquet
RAW_TABLES = {
    "runs": "collection_id, run_id",
    "rankings": "collection_id, run_id, question_id, rank",
    "documents": "collection_id, doc_id",
    "questions": "collection_id, question_id",
    "qrels": "collection_id, question_id, doc_id",
    "question_latencies": "collection_id, run_id, question_id",
    "chunk_rankings": "collection_id, run_id, question_id, rank",
    "collection_settings": "collection_id, setting, value",
    "question_tags": "collection_id, question_id, tag",
    "judging_pools": "collection_id, run_id",
    "judgments": "collection_id, qrels_version, question_id, doc_id",
    "judgment_versions": "collection_id, qrels_version",
}


def spark_directory(database: Path) -> Path:
    """Where the Spark target keeps its warehouse, metastore and raw Parquet files: $RETRIEVAL_SPARK_DIR, else
    `<database>.spark` beside the DuckDB file (retrieval.spark for retrieval.duckdb)."""
    return Path(os.environ.get("RETRIEVAL_SPARK_DIR") or database.with_suffix(".spark")).absolute()


def publish_raw(database: Path, directory: Path) -> str:
    """Write the DuckDB file's raw tables as Parquet into a new version folder, then switch
    `<directory>/raw/current` to it with one atomic rename: a build never sees a mix of two publications, and a
    failed write leaves the current one as it was. Older versions are then removed. One line saying so."""
    raw = directory / "raw"
    version = raw / f"v{time.time_ns()}"
    version.mkdir(parents=True)
    rows = 0
    try:
        # the raw schema's tables in memory, empty: what a table the file has not got yet is written as
        with duckdb.connect() as con:
            con.execute(RAW_SCHEMA_DDL)
            con.execute(f"attach {sql_literal(database)} as warehouse (read_only)")
            present = {name for (name,) in con.execute(
                "select table_name from information_schema.tables "
                "where table_catalog = 'warehouse' and table_schema = 'raw'").fetchall()}  # fmt: skip
            for table, order in RAW_TABLES.items():
                source = f"{'warehouse' if table in present else 'memory'}.raw.{table}"
                # one file per table, in a fixed order: the same raw tables give the same files (COPY: its rows)
                target = sql_literal(f"{version / table}.parquet")
                copy = f"copy (select * from {source} order by {order}) to {target} (format parquet)"
                ((written,),) = con.execute(copy).fetchall()
                rows += written
        link = raw / f".current-{version.name}"
        link.symlink_to(version.name)
        os.replace(link, raw / "current")
    except BaseException:
        shutil.rmtree(version, ignore_errors=True)
        raise
    for old in raw.iterdir():
        if old.is_dir() and not old.is_symlink() and old.name.startswith("v") and old != version:
            shutil.rmtree(old, ignore_errors=True)
    return f"wrote the raw tables of {shown(database)} ({rows:,} rows) as Parquet in {shown(raw)}/current"


def marts_directory(directory: Path) -> Path:
    """Where a local Spark build leaves the marts: one Parquet table folder each, <directory>/warehouse/main.db/<mart>
    (profiles.yml's spark.sql.warehouse.dir; the marts' schema is main)."""
    return directory / "warehouse" / "main.db"


@dataclass(frozen=True)
class SparkBuild:
    """What `run_on_spark` did: the raw tables it published (a line), dbt's exit code, where dbt wrote its results,
    when it started, and where the marts are."""

    published: str
    code: int
    target_path: Path
    started: datetime.datetime
    marts: Path


def run_on_spark(database: Path, dbt_args: Sequence[str]) -> SparkBuild:
    """`retrieval-metrics build --target spark`: publish the database's raw tables as Parquet (publish_raw), then
    run dbt build on the Spark target in a child process (`main`), which declares them as raw.<table>. A failed
    build leaves the marts of the last good one (dbt replaces a table only once its new rows are computed)."""
    from retrieval_metrics.dbt_runner import COMMAND_BUILD_EXCLUDES, dbt_command, project_dir

    if not database.exists():
        raise InputError(f"{shown(database)} does not exist: import or rank something first")
    directory = spark_directory(database)
    published = publish_raw(database, directory)
    # dbt's files for Spark beside the DuckDB target's, not over them: each keeps its parsed project
    target_path = Path(os.environ.get("DBT_TARGET_PATH") or project_dir() / "target") / "spark"
    env = {**os.environ, "RETRIEVAL_DB": str(database), "RETRIEVAL_SPARK_DIR": str(directory),
           "RETRIEVAL_RAW_PARQUET": str(directory / "raw" / "current"),
           "DBT_TARGET_PATH": str(target_path)}  # fmt: skip
    _, *arguments = dbt_command(["build", *COMMAND_BUILD_EXCLUDES, *dbt_args])  # dbt's, without its executable
    command = [sys.executable, "-m", "retrieval_metrics.spark", *arguments]
    started = datetime.datetime.now(datetime.UTC)
    code = subprocess.run(command, env=env, cwd=directory, check=False).returncode
    return SparkBuild(published, code, target_path, started, marts_directory(directory))


class SessionPythonJobHelper:
    """dbt-spark's Python-model submission, for the `session` method: run the compiled model (its code and
    dbt-spark's table-writing code after it) in this process, against dbt's own Spark session."""

    def __init__(self, parsed_model: dict[str, Any], credentials: Any) -> None:
        self.name = parsed_model["alias"]

    def submit(self, compiled_code: str) -> None:
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()
        exec(compile(compiled_code, f"<dbt python model {self.name}>", "exec"), {"spark": spark})


def spark_literal(value: Any) -> str | float:
    """A seed cell as dbt-spark's session method binds it (into `%s` of its INSERT), with the quoting it lacks:
    a string with a quote or a backslash in it (Spark reads backslash escapes in literals) broke the INSERT,
    and an empty cell became the string 'None'."""
    if value is None:
        return "null"
    if isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool):
        return float(value)
    text = value.isoformat(sep=" ") if isinstance(value, datetime.datetime) else str(value)
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def patch_dbt_spark() -> None:
    """What the session method needs from dbt-spark 1.11 beyond what it has: `session` as a Python-model
    submission method (the default under the session method), and seed values bound as proper literals."""
    from dbt.adapters.spark.impl import SparkAdapter
    from dbt.adapters.spark.session import SessionConnectionWrapper

    helpers = SparkAdapter.python_submission_helpers.fget
    default = SparkAdapter.default_python_submission_method.fget
    SparkAdapter.python_submission_helpers = property(  # type: ignore[method-assign,assignment]
        lambda self: {**helpers(self), "session": SessionPythonJobHelper})
    SparkAdapter.default_python_submission_method = property(  # type: ignore[method-assign,assignment]
        lambda self: "session" if self.config.credentials.method == "session" else default(self))
    SessionConnectionWrapper._fix_binding = staticmethod(spark_literal)  # type: ignore[method-assign,assignment]


def main(argv: list[str] | None = None) -> int:
    """`dbt ARGS`, with dbt-spark patched (patch_dbt_spark)."""
    from dbt.cli.main import dbtRunner

    patch_dbt_spark()
    result = dbtRunner().invoke(list(sys.argv[1:] if argv is None else argv))
    return 0 if result.success else (2 if result.exception else 1)


if __name__ == "__main__":
    sys.exit(main())
