"""`retrieval-metrics list`: the collections and runs of the build database, built or not, as aligned tables or one
JSON document, its numbers those of the raw tables and seeds; an unknown collection, an empty or missing warehouse
and a warehouse a writer holds each get one line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from conftest import REPO_ROOT, Warehouse, cli_in_process, run_cli, warehouse_checksums
from retrieval_metrics.warehouse import RAW_SCHEMA_DDL

QRELS = "h1 0 d1 1\nh1 0 d2 0\nh2 0 d3 2\nh3 0 d1 1\n"
RUN = "h1 Q0 d1 1 3.0 tfidf\nh1 Q0 d2 2 2.0 tfidf\nh2 Q0 d3 1 1.5 tfidf\n"  # two of the three questions


def listed(warehouse: Warehouse, *args: str) -> subprocess.CompletedProcess[str]:
    return cli_in_process("list", "--db", str(warehouse.db_path), *args, env=warehouse.env)


@pytest.fixture
def two_collections(lesson: Warehouse, tmp_path: Path) -> Warehouse:
    """The lesson (keyword_overlap, built) and an imported collection `help` with a run that is not built yet."""
    warehouse = lesson.copy(tmp_path / "two")
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    db = ["--db", str(warehouse.db_path)]
    for args in (["--qrels", str(tmp_path / "qrels.txt")], ["--run", str(tmp_path / "run.txt"), "--run-id", "tfidf-v1"]):
        result = run_cli("import", "--collection", "help", *args, *db, env=warehouse.env)
        assert result.returncode == 0, result.stderr
    return warehouse


@pytest.mark.dbt
def test_list_plain_and_json(two_collections: Warehouse) -> None:
    warehouse = two_collections
    before = warehouse_checksums(warehouse.db_path)
    result = listed(warehouse, "--json")
    assert result.returncode == 0 and result.stderr == "", result.stderr
    document = json.loads(result.stdout)
    collections = {c["collection_id"]: c for c in document["collections"]}
    assert list(collections) == ["docent", "help"]

    # the numbers are the raw tables' (help's) and the seed files' (docent's)
    help_ = collections["help"]
    assert (help_["documents"], help_["questions"], help_["judgments"]) == (0, 3, 4)
    assert help_["qrels_versions"] == [0] and help_["preset"] is None
    with duckdb.connect() as con:
        seeds = {name: con.execute(f"select count(*) from read_csv('{REPO_ROOT / 'seeds' / name}.csv')").fetchone()[0]
                 for name in ("docs", "golden_questions", "golden_qrels")}  # fmt: skip
    docent = collections["docent"]
    assert (docent["documents"], docent["questions"], docent["judgments"]) == (
        seeds["docs"], seeds["golden_questions"], seeds["golden_qrels"])
    assert (docent["preset"], docent["baseline_run_id"]) == ("lesson", "keyword_overlap")

    raw_runs = {(c, r): (retriever, json.loads(params), written.isoformat(), n_rows, n_questions)
                for c, r, retriever, params, written, n_rows, n_questions in warehouse.rows("""
        select runs.collection_id, runs.run_id, retriever, parameters, created_at, count(*), count(distinct question_id)
        from raw.runs as runs join raw.rankings using (collection_id, run_id) group by all""")}  # fmt: skip
    listed_runs = {(c, run["run_id"]): (run["retriever"], run["parameters"], run["written_at"], run["rows"],
                                        run["questions_answered"])
                   for c, entry in collections.items() for run in entry["runs"]}  # fmt: skip
    assert listed_runs == raw_runs
    assert raw_runs["help", "tfidf-v1"][0] == "tfidf" and raw_runs["help", "tfidf-v1"][3:] == (3, 2)
    # built: keyword_overlap's rows are in the build's run_metrics, with the written_at the marts serve; help's not
    built = {(c, run["run_id"]): run["built"] for c, entry in collections.items() for run in entry["runs"]}
    assert built == {("docent", "keyword_overlap"): True, ("help", "tfidf-v1"): False}
    (served,) = warehouse.rows("select distinct written_at from run_leaderboard where run_id = 'keyword_overlap'")
    assert served[0].isoformat() == raw_runs["docent", "keyword_overlap"][2]

    # the plain listing: the same, as two aligned tables
    result = listed(warehouse)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"{warehouse.db_path}: 2 collections, 2 runs (1 built)"
    collection_rows = lines[2:5]
    assert collection_rows[0].split() == ["collection", "documents", "questions", "judgments", "qrels", "versions",
                                          "preset", "baseline"]  # fmt: skip
    assert collection_rows[1].split() == ["docent", *map(str, seeds.values()), "0", "lesson", "keyword_overlap"]
    assert collection_rows[2].split()[:5] == ["help", "0", "3", "4", "0"]
    header, *runs = lines[6:]
    assert header.split()[:3] == ["collection", "run", "retriever"] and len(runs) == 2
    assert [row.split()[:3] for row in runs] == [["docent", "keyword_overlap", "keyword_overlap"],
                                                 ["help", "tfidf-v1", "tfidf"]]  # fmt: skip
    when = header.index("written at")  # the columns line up under their headers
    for row, key in zip(runs, [("docent", "keyword_overlap"), ("help", "tfidf-v1")]):
        assert row[when:].startswith(raw_runs[key][2].replace("T", " ")[:19])
        assert row[header.index("built"):].split()[0] == ("yes" if built[key] else "no")

    # one collection
    only = listed(warehouse, "--collection", "help")
    assert only.returncode == 0 and "docent" not in only.stdout and "tfidf-v1" in only.stdout
    assert warehouse_checksums(warehouse.db_path) == before  # read-only


@pytest.mark.dbt
def test_an_unknown_collection_gets_one_line_naming_those_there_are(two_collections: Warehouse) -> None:
    before = warehouse_checksums(two_collections.db_path)
    result = listed(two_collections, "--collection", "hlep")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (f"retrieval-metrics list: error: no collection 'hlep' in {two_collections.db_path} "
                             "(its collections: docent, help)\n")  # fmt: skip
    assert warehouse_checksums(two_collections.db_path) == before


def test_an_empty_or_missing_warehouse_gets_one_helpful_line(tmp_path: Path) -> None:
    empty = Warehouse(REPO_ROOT, tmp_path / "empty.duckdb")
    with duckdb.connect(str(empty.db_path)) as con:
        con.execute(RAW_SCHEMA_DDL)  # the raw tables, no rows
    result = listed(empty)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.count("\n") == 1 and result.stdout.startswith(f"nothing in {empty.db_path} yet: ")
    assert "retrieval-metrics rank --retriever bm25" in result.stdout and "import" in result.stdout
    assert json.loads(listed(empty, "--json").stdout)["collections"] == []
    unknown = listed(empty, "--collection", "docent")
    assert unknown.returncode == 2 and "(its collections: none yet)" in unknown.stderr

    missing = Warehouse(REPO_ROOT, tmp_path / "absent.duckdb")
    result = listed(missing)
    assert result.returncode == 2 and result.stdout == "" and result.stderr.count("\n") == 1
    assert f"{missing.db_path} does not exist" in result.stderr and not missing.db_path.exists()


@pytest.fixture
def held(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """A process writing the build database (holding it open read-write), as a running import would."""
    database = tmp_path / "held.duckdb"
    duckdb.connect(str(database)).close()
    code = f"import duckdb, sys; c = duckdb.connect({str(database)!r}); print('ready', flush=True); sys.stdin.read()"
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    try:
        yield process, database
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=30)


def test_a_warehouse_a_writer_holds_gets_one_line(held: tuple[subprocess.Popen[str], Path]) -> None:
    process, database = held
    result = listed(Warehouse(REPO_ROOT, database))
    assert result.returncode == 2 and result.stdout == ""
    assert re.fullmatch(rf"retrieval-metrics list: error: {re.escape(str(database))} is being written by PID "
                        rf"{process.pid} \(.*\): list again when it is done .*\n", result.stderr), result.stderr
