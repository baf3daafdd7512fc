"""What the Spark target needs from the package without a Spark (fast tier): the raw tables published as Parquet
all at once and byte for byte the same each time, seed values quoted as Spark reads literals, the target read
from dbt's arguments. The builds on Spark are in test_spark.py."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from retrieval_metrics.dbt_runner import target_of
from retrieval_metrics.spark import RAW_TABLES, publish_raw, spark_directory, spark_literal
from retrieval_metrics.warehouse import RAW_SCHEMA_DDL


def raw_warehouse(path: Path, questions: int = 3) -> Path:
    with duckdb.connect(str(path)) as con:
        con.execute(RAW_SCHEMA_DDL)
        con.execute("insert into raw.questions (collection_id, question_id, question_text) "
                    f"select 'c', 'q' || i, 'question ' || i from range({questions}) t(i)")  # fmt: skip
    return path


def files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_publish_writes_every_raw_table_and_switches_current_at_once(tmp_path: Path) -> None:
    database = raw_warehouse(tmp_path / "w.duckdb")
    directory = spark_directory(database)
    assert directory == tmp_path / "w.spark"

    line = publish_raw(database, directory)
    first = (directory / "raw" / "current").resolve()
    written = files(first)
    assert "(3 rows)" in line and set(written) == {f"{table}.parquet" for table in RAW_TABLES}
    assert duckdb.sql(f"select count(*) from '{first}/questions.parquet'").fetchall() == [(3,)]
    assert duckdb.sql(f"select count(*) from '{first}/rankings.parquet'").fetchall() == [(0,)]  # absent: empty

    publish_raw(database, directory)  # the same raw tables: the same bytes, in a new version; the old one gone
    second = (directory / "raw" / "current").resolve()
    assert second != first and not first.exists() and files(second) == written


def test_a_failed_publish_leaves_the_current_tables_as_they_were(tmp_path: Path) -> None:
    database = raw_warehouse(tmp_path / "w.duckdb")
    directory = tmp_path / "spark"
    publish_raw(database, directory)
    current = (directory / "raw" / "current").resolve()
    before = files(current)
    with duckdb.connect(str(database)) as con:  # a table whose columns the raw schema does not have
        con.execute("drop table raw.qrels; create table raw.qrels as select 1 as unexpected")
    with pytest.raises(duckdb.Error):
        publish_raw(database, directory)
    assert (directory / "raw" / "current").resolve() == current and files(current) == before
    assert [path.name for path in (directory / "raw").iterdir() if not path.is_symlink()] == [current.name]


@pytest.mark.parametrize(
    ("value", "literal"),
    [(None, "null"), (3, 3.0), (0.25, 0.25), ("pip install 'meridian'", r"'pip install \'meridian\''"),
     ("C:\\path", r"'C:\\path'"), ("", "''")],
)  # fmt: skip
def test_seed_values_are_bound_as_spark_literals(value: object, literal: object) -> None:
    assert spark_literal(value) == literal


def test_the_target_comes_from_dbts_arguments_then_dbt_target(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DBT_TARGET", raising=False)
    assert target_of(["--select", "x"]) is None
    assert target_of(["--target", "spark"]) == target_of(["-t", "spark"]) == target_of(["--target=spark"]) == "spark"
    monkeypatch.setenv("DBT_TARGET", "spark")
    assert target_of([]) == "spark" and target_of(["--target", "dev"]) == "dev"


@pytest.mark.spark
def test_what_patch_dbt_spark_replaces_is_still_there_and_used() -> None:
    """patch_dbt_spark() replaces dbt-spark internals (retrieval_metrics/spark.py): this fails when an upgrade of
    dbt-spark renames or stops calling one of them, instead of the patch silently doing nothing."""
    import inspect

    from dbt.adapters.spark.impl import SparkAdapter
    from dbt.adapters.spark.session import SessionConnectionWrapper

    from retrieval_metrics.spark import SessionPythonJobHelper, patch_dbt_spark

    for name in ("python_submission_helpers", "default_python_submission_method"):
        assert isinstance(inspect.getattr_static(SparkAdapter, name), property), name
    assert "self._fix_binding(binding)" in inspect.getsource(SessionConnectionWrapper.execute)
    helpers, default = SparkAdapter.python_submission_helpers, SparkAdapter.default_python_submission_method
    fix_binding = inspect.getattr_static(SessionConnectionWrapper, "_fix_binding")
    try:
        patch_dbt_spark()
        assert SessionConnectionWrapper._fix_binding("it's") == spark_literal("it's")
        adapter = SparkAdapter.__new__(SparkAdapter)  # the properties read only self.config
        adapter.config = type("Config", (), {"credentials": type("Credentials", (), {"method": "session"})()})()
        assert adapter.python_submission_helpers["session"] is SessionPythonJobHelper
        assert adapter.default_python_submission_method == "session"
    finally:
        SparkAdapter.python_submission_helpers, SparkAdapter.default_python_submission_method = helpers, default
        SessionConnectionWrapper._fix_binding = fix_binding
