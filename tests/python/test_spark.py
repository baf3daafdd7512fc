"""The same numbers on Apache Spark (`make test-spark`: needs `make install-spark` and Java 17; `make test`
leaves these out). One warehouse holds the Docent collection (every installed retriever's run) and a generated
mid-size TREC collection (scripts/benchmark_engines.py's write_collection: 1,000 questions x 100 docs, three
runs, with score ties, ties only as 32-bit floats, grades 0-3 and questions missing from runs). It is built on
DuckDB (`retrieval-metrics build`) and on Spark (`retrieval-metrics build --target spark`, dbt-spark's
session method); every row of every mart must agree, and the lesson's tests and the regression gate must pass
on Spark as they do on DuckDB.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import duckdb
import pytest
from benchmark_engines import MIDSIZE_SETTINGS, write_collection
from conftest import REPO_ROOT, TARGETS, Warehouse

from retrieval_metrics.spark import marts_directory, spark_directory
from retrieval_metrics.judging import JudgeRequest, judge_collection
from retrieval_metrics.pooling import PoolRequest, record_pool
from retrieval_metrics.warehouse import MARTS, sql_literal

pytestmark = [pytest.mark.spark, pytest.mark.dbt, pytest.mark.slow]

TOLERANCE = 1e-9
FLOATING = ("DOUBLE", "FLOAT", "DECIMAL")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Warehouse, dict[str, dict[str, str]]]:
    """The warehouse, built on both engines (the Spark marts are Parquet tables beside the DuckDB file), and
    each build's node statuses by node name."""
    folder = tmp_path_factory.mktemp("spark")
    warehouse = Warehouse(REPO_ROOT, folder / "warehouse.duckdb").ranked("--all")
    qrels, runs = write_collection(folder / "midsize")
    for position, (run_id, path) in enumerate(runs.items()):
        extra = ["--qrels", str(qrels)] if position == 0 else []
        result = warehouse.cli("import", "--collection", "midsize", *extra, "--run", str(path), "--run-id", run_id)
        assert result.returncode == 0, result.stderr
    # a baseline and the lesson's cutoffs (the gate's ndcg_cut_2), which only Docent has by default
    result = warehouse.cli("settings", "--collection", "midsize", *MIDSIZE_SETTINGS)
    assert result.returncode == 0, result.stderr
    record_pool(warehouse.db_path, PoolRequest("midsize", None, 20, "rrf"))  # the judging marts: floats, snippets
    record_pool(warehouse.db_path, PoolRequest("docent", None, 3, "depth"))
    # an automatic judge of 60 judged pairs: the agreement marts (their resamples a Python model on Spark too; the
    # leaderboards bootstrap 1,000 resamples x questions x runs x measures, which a judge of 400 pairs took past
    # the local Spark session's memory)
    judge_collection(warehouse.db_path, JudgeRequest("midsize", "agreement_judges:NoisyJudge",
                                                     {"qrels": str(qrels), "keep": 0.6}, pairs="judged", limit=60))  # fmt: skip
    statuses = {}
    engines = {"duckdb": ([], TARGETS["cli"]), "spark": (["--target", "spark"], TARGETS["cli"] / "spark")}
    for engine, (args, target) in engines.items():
        result = warehouse.cli("build", *args)
        assert result.returncode == 0, f"{engine} build failed:\n{result.stdout[-5000:]}\n{result.stderr[-3000:]}"
        statuses[engine] = node_statuses(target)
    return warehouse, statuses


def node_statuses(target: Path) -> dict[str, str]:
    """The status of each node of the last build in dbt's target directory (run_results.json), by node name."""
    results = json.loads((target / "run_results.json").read_text())["results"]
    nodes = json.loads((target / "manifest.json").read_text())["nodes"]
    return {nodes[r["unique_id"]]["name"]: r["status"] for r in results if r["unique_id"] in nodes}


def spark_marts(warehouse: Warehouse) -> Path:
    return marts_directory(spark_directory(warehouse.db_path))


def parquet_table(folder: Path) -> str:
    """A Spark table's folder of Parquet files, as a DuckDB table expression."""
    return f"read_parquet({sql_literal(f'{folder}/*.parquet')})"


# what computed a per-run row, not what it holds: each engine's own (Spark's per-run models are tables, hashed from
# their own code, and its Python models record no dbt invocation); and run_pair_tests' cache key, a hash of the
# values' bits, which the engines agree on to 1e-9, not bit for bit
COMPUTED_BY = ("fingerprint", "invocation_id", "computed_at", "pair_fingerprint")


def read_both(con: duckdb.DuckDBPyConnection, warehouse: Warehouse, mart: str) -> tuple[list, list, list, list]:
    """(DuckDB's columns with types, Spark's, DuckDB's rows, Spark's rows) of a mart but COMPUTED_BY, both in the
    same order: by every column that is not a float, then by the floats."""
    duck, spark = f"duck.main.{mart}", parquet_table(spark_marts(warehouse) / mart)
    columns, spark_columns = (
        [(name, kind) for name, kind, *_ in con.execute(f"describe select * from {source}").fetchall()
         if name not in COMPUTED_BY]
        for source in (duck, spark)
    )
    exact = [name for name, kind in columns if not kind.startswith(FLOATING)]
    order = ", ".join(exact + [name for name, _ in columns if name not in exact])
    rows = [con.execute(f"select {', '.join(name for name, _ in columns)} from {source} order by {order}").fetchall()
            for source in (duck, spark)]  # fmt: skip
    return columns, spark_columns, *rows


def test_every_mart_row_equals_duckdbs_to_1e_9(built: tuple[Warehouse, dict]) -> None:
    built, _ = built
    with duckdb.connect() as con:
        con.execute(f"attach {sql_literal(built.db_path)} as duck (read_only)")
        checked = {}
        for mart in MARTS:
            columns, spark_columns, duck_rows, spark_rows = read_both(con, built, mart)
            assert spark_columns == columns, f"{mart}: columns or types differ"
            assert len(spark_rows) == len(duck_rows), f"{mart}: {len(spark_rows)} rows, {len(duck_rows)} on DuckDB"
            for duck_row, spark_row in zip(duck_rows, spark_rows, strict=True):
                for (name, kind), ours, theirs in zip(columns, duck_row, spark_row, strict=True):
                    if kind.startswith(FLOATING) and ours is not None and theirs is not None:
                        same = math.isclose(ours, theirs, rel_tol=TOLERANCE, abs_tol=TOLERANCE) or (
                            math.isnan(ours) and math.isnan(theirs))
                    else:
                        same = ours == theirs
                    assert same, f"{mart}.{name}: DuckDB {ours!r}, Spark {theirs!r} in DuckDB's row {duck_row}"
            checked[mart] = len(duck_rows)
        collections = dict(con.execute(
            "select collection_id, count(*) from duck.main.question_measures group by all").fetchall())  # fmt: skip
    # both collections are in the marts compared, the mid-size one with every question of every run
    assert collections["docent"] > 0 and collections["midsize"] > 3 * 950 * 30
    assert checked["run_comparisons"] > 0 and checked["missed_relevant_docs"] > 0
    assert checked["run_tag_measures"] > 0 and checked["run_tag_comparisons"] > 0  # Docent's topics
    assert checked["judging_queue"] > 100 and checked["judging_pool_coverage"] > 3
    assert checked["judge_agreement"] == 1 and checked["judge_confusion"] > 3
    assert checked["judge_leaderboard_agreement"] > 10
    # many runs at once: every pair, the ANOVA, the letter groups and the questions needed, as DuckDB has them
    assert checked["run_pair_tests"] > 3 and checked["run_letter_groups"] > 3
    assert checked["measure_anova"] > 1 and checked["measure_questions_needed"] > 1


def test_the_lessons_tests_and_the_regression_gate_pass_on_spark_as_every_node_does_on_duckdb(
    built: tuple[Warehouse, dict[str, dict[str, str]]],
) -> None:
    _, statuses = built
    manifest = json.loads((TARGETS["cli"] / "spark" / "manifest.json").read_text())["nodes"]
    lesson = {node["name"] for node in manifest.values()
              if node["resource_type"] == "test" and "lesson_golden" in node["tags"]}  # fmt: skip
    gate = {node["name"] for node in manifest.values() if node["name"].startswith("no_regression_vs_baseline")}
    assert len(lesson) == 2 and len(gate) == 1  # the lesson's aggregates and its per-question table; the gate
    assert {name: statuses["spark"].get(name) for name in lesson | gate} == dict.fromkeys(lesson | gate, "pass")
    assert statuses["spark"] == statuses["duckdb"]


def test_the_gate_fails_on_spark_as_on_duckdb_with_the_same_rows(built: tuple[Warehouse, dict], tmp_path: Path) -> None:
    """Gate the mid-size collection's worse run: both engines fail the build with the same failure rows."""
    built, _ = built
    gated = ["--select", "int_collection_settings", "question_comparisons", "--vars",
             "{gated_collection_id: midsize, gated_run_ids: [worse]}"]  # the settings view holds the gate's runs
    copy = built.copy(tmp_path / "gated")
    spark_dir = spark_directory(built.db_path)
    failures = {}
    for engine, warehouse in (("duckdb", copy), ("spark", built)):
        result = warehouse.cli("build", *gated, *(["--target", "spark"] if engine == "spark" else []))
        # a failed data test is the data's fault: exit 2 and the test named (with its first rows on DuckDB)
        assert result.returncode == 2, f"{engine}: {result.stderr[-2000:]}"
        assert "retrieval-metrics build: test no_regression_vs_baseline_" in result.stderr, result.stderr
        with duckdb.connect() as con:
            if engine == "duckdb":
                con.execute(f"attach {sql_literal(copy.db_path)} as duck (read_only)")
                source = "duck.dbt_test__audit.regression_gate"
            else:
                source = parquet_table(spark_dir / "warehouse" / "dbt_test__audit.db" / "regression_gate")
            failures[engine] = con.execute(f"select run_id, question_id, difference from {source} "
                                           "where measure_name = 'ndcg_cut_2' order by question_id").fetchall()  # fmt: skip
    assert len(failures["duckdb"]) > 100
    assert [row[:2] for row in failures["spark"]] == [row[:2] for row in failures["duckdb"]]
    for (_, _, ours), (_, _, theirs) in zip(failures["duckdb"], failures["spark"], strict=True):
        assert math.isclose(ours, theirs, abs_tol=TOLERANCE)
