"""The serving copy: readers of serving.duckdb keep working while the warehouse is rebuilt, a failed build never
replaces it, and it can be written for an older DuckDB. (A tool holding the live build file: test_cli.py.)"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from conftest import REPO_ROOT, Warehouse, cli_env, run_cli
from retrieval_metrics.serving import publish

pytestmark = pytest.mark.dbt

# Everything a complete build has, as one tuple: a half-built file could not give a consistent answer.
SNAPSHOT = """
select
    (select count(*) from main.run_metrics),
    (select count(distinct run_id) from main.run_metrics),
    (select count(*) from main.question_metrics),
    (select count(*) from main.run_leaderboard),
    (select count(*) from main.missed_relevant_docs)
"""

# A reader of the serving copy, querying it in a loop until the stop file appears, then reporting what it saw.
# "held": one read-only connection kept open the whole time, as a notebook or a BI tool's pool keeps it.
# "fresh": a new read-only connection every round, closed after it. (Within one process DuckDB shares one open
# database per file, so a process sees a new build only once all its connections to the file are closed.)
READER = """
import json, os, sys, time
import duckdb
mode, serving, stop, snapshot = sys.argv[1:5]
held = duckdb.connect(serving, read_only=True) if mode == "held" else None
with duckdb.connect(serving, read_only=True) as first:
    print(json.dumps(first.execute(snapshot).fetchone()), flush=True)
seen, errors, rounds = set(), [], 0
while not os.path.exists(stop):
    rounds += 1
    try:
        if held is not None:
            seen.add(held.execute(snapshot).fetchone())
        else:
            with duckdb.connect(serving, read_only=True) as fresh:
                seen.add(fresh.execute(snapshot).fetchone())
    except duckdb.Error as exc:
        errors.append(str(exc).splitlines()[0])
    time.sleep(0.1)  # ~10 rounds a second: enough to catch a half-built file, light on the machine
print(json.dumps({"rounds": rounds, "seen": sorted(seen), "errors": errors}))
"""


def environment(build: Path, serving: Path | None = None) -> dict[str, str]:
    """The commands' environment: this build file, this serving copy (dbt's target: the session's)."""
    env = cli_env(build)
    if serving is not None:
        env["RETRIEVAL_SERVING_DB"] = str(serving)
    return env


def snapshot(path: Path) -> tuple[object, ...]:
    with duckdb.connect(str(path), read_only=True) as con:
        row = con.execute(SNAPSHOT).fetchone()
    assert row is not None
    return tuple(row)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_readers_of_the_serving_copy_see_only_complete_builds_while_make_run_rebuilds(
    lesson: Warehouse, tmp_path: Path
) -> None:
    build, serving = lesson.copy(tmp_path).db_path, tmp_path / "serving.duckdb"  # the default: next to the build
    env = environment(build)
    publish(build, serving)  # the lesson's run, built and published
    old = snapshot(serving)
    assert old[1] == 1  # one run: keyword_overlap

    stop = tmp_path / "stop"
    readers = {
        mode: subprocess.Popen(
            [sys.executable, "-c", READER, mode, str(serving), str(stop), SNAPSHOT],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        for mode in ("held", "fresh")
    }
    try:
        for reader in readers.values():  # both are reading before the rebuild starts
            assert reader.stdout is not None and tuple(json.loads(reader.stdout.readline())) == old
        # What a user runs: rank every retriever (new runs), dbt build on the build file, publish, scorecard.
        make = subprocess.run(
            ["make", "--no-print-directory", "-C", str(REPO_ROOT), "run"],
            capture_output=True, text=True, env=env, timeout=900, check=False,
        )  # fmt: skip
        time.sleep(0.5)  # a few more rounds after the swap
    finally:
        stop.touch()
        reports = {mode: reader.communicate(timeout=120) for mode, reader in readers.items()}
    assert make.returncode == 0, make.stdout[-3000:] + make.stderr[-3000:]
    assert f"retrieval-metrics build: published {serving} " in make.stdout
    # a line per stage and the scorecard: no echo of make's commands, dbt's own lines only in its log file
    assert make.stdout.startswith("retrieval-metrics rank: "), make.stdout[:500]
    assert not re.search(r"^\d\d:\d\d:\d\d ", make.stdout, re.MULTILINE), make.stdout[:3000]
    assert "docent / keyword_overlap  (retriever keyword_overlap, 9 questions)" in make.stdout
    seen = {}
    for mode, (out, err) in reports.items():
        assert readers[mode].returncode == 0, err
        seen[mode] = json.loads(out.strip().splitlines()[-1])
        assert seen[mode]["errors"] == [] and seen[mode]["rounds"] >= 20  # kept querying while make run ran

    new = snapshot(serving)
    with duckdb.connect(str(build), read_only=True) as con:
        runs = con.execute("select count(*) from raw.runs").fetchone()[0]
    assert new[1] == runs >= 3 and new != old  # the new build, with the runs make run added
    assert [tuple(s) for s in seen["held"]["seen"]] == [old]  # the open connection: the old build, whole, always
    # new connections: one whole build or the other, the new one as soon as it was published
    assert {tuple(s) for s in seen["fresh"]["seen"]} == {old, new}
    assert not Path(f"{serving}.wal").exists() and not list(tmp_path.glob(".serving.duckdb.*"))


def test_a_failed_build_leaves_the_serving_copy_untouched(lesson: Warehouse, tmp_path: Path) -> None:
    build = lesson.copy(tmp_path).db_path  # the lesson, built, as a build file of its own
    serving = tmp_path / "published" / "bi.duckdb"  # RETRIEVAL_SERVING_DB
    env = environment(build, serving)
    publish(build, serving)  # the last good build, published
    before, stat_before = digest(serving), serving.stat()

    # other cutoffs for Docent rebuild the marts in the build file (the build selects what reads the changed
    # settings), then fail the lesson's golden-value tests
    assert run_cli("settings", "--collection", "docent", "--set", "k_values=1,5", env=env).returncode == 0
    failed = run_cli("build", "--quiet", env=env)
    assert failed.returncode == 2  # the data's fault: the golden values do not hold at k = 5
    last = failed.stderr.strip().splitlines()[-1]
    assert last.startswith("retrieval-metrics build: error: dbt build failed (") and "matches_expected_values" in last
    assert f"; {serving} left as it was; dbt's log: " in last
    with duckdb.connect(str(build), read_only=True) as con:  # the build file did change ...
        assert con.execute("select distinct k from run_metrics order by k").fetchall() == [(1,), (5,)]
    assert digest(serving) == before and serving.stat().st_ino == stat_before.st_ino  # ... the serving copy not
    with duckdb.connect(str(serving), read_only=True) as con:
        assert con.execute("select distinct k from run_metrics order by k").fetchall() == [(1,), (2,), (3,)]
    assert [p.name for p in serving.parent.iterdir()] == ["bi.duckdb"]  # no temporary copy left behind


def test_the_serving_copy_is_written_for_older_duckdb_readers(lesson: Warehouse, tmp_path: Path) -> None:
    """By default in the v1.0.0 storage format (DuckDB 1.0 and newer read it), with every row and description;
    RETRIEVAL_SERVING_STORAGE_VERSION=latest writes the build's own format instead."""
    build, serving = lesson.copy(tmp_path).db_path, tmp_path / "serving.duckdb"
    env = environment(build)
    env.pop("RETRIEVAL_SERVING_STORAGE_VERSION", None)
    built = run_cli("build", "--quiet", "--select", "run_metrics", env=env)
    assert built.returncode == 0, built.stdout + built.stderr
    with duckdb.connect() as con:
        con.execute(f"attach '{build}' as build (read_only)")
        con.execute(f"attach '{serving}' as serving (read_only)")
        tags = dict(con.execute("select database_name, tags['storage_version'] from duckdb_databases()").fetchall())
        assert (tags["build"], tags["serving"]) == ("v2.0.0+", "v1.0.0+")  # DuckDB 1.0 and newer can read it
        for query in (
            "select * from {db}.main.run_metrics order by all",
            "select schema_name, table_name, column_name, comment from duckdb_columns() as c where database_name = '{db}' "
            "and schema_name not in ('raw', 'build_state', '_serving') and exists (select 1 from duckdb_tables() as t "
            "where (t.database_name, t.schema_name, t.table_name) = (c.database_name, c.schema_name, c.table_name)) "
            "order by all",
        ):
            copied, built = (con.execute(query.format(db=db)).fetchall() for db in ("serving", "build"))
            assert copied == built
    # published again: the serving copy in that format is the start of the new one
    again = run_cli("build", "--force", "--quiet", "--select", "run_metrics", env=env)  # the same inputs: forced
    assert again.returncode == 0 and "published" in again.stdout, again.stdout + again.stderr
    with duckdb.connect(str(serving), read_only=True) as con:
        assert con.execute("select tags['storage_version'] from duckdb_databases() "
                           "where database_name = current_database()").fetchone() == ("v1.0.0+",)  # fmt: skip
    latest = run_cli("build", "--quiet", "--select", "run_metrics",
                     env={**env, "RETRIEVAL_SERVING_STORAGE_VERSION": "latest"})  # fmt: skip
    assert latest.returncode == 0, latest.stdout + latest.stderr
    with duckdb.connect(str(serving), read_only=True) as con:
        assert con.execute("select tags['storage_version'] from duckdb_databases() "
                           "where database_name = current_database()").fetchone() == ("v2.0.0+",)  # fmt: skip


def served(path: Path) -> dict[str, object]:
    """Everything a serving copy holds: its tables' rows (sorted; a float's repr gives back its bits; not which dbt
    invocation computed a row, nor when) and the descriptions of its tables and columns; of its record of
    publication (when), only the build it names."""
    computed = "columns(lambda c: c not in ('invocation_id', 'computed_at'))"
    with duckdb.connect(str(path), read_only=True) as con:
        tables = con.execute("select schema_name, table_name, comment from duckdb_tables() order by all").fetchall()
        content: dict[str, object] = {
            f"{schema}.{table}": sorted(map(repr, con.execute(f'select {computed} from "{schema}"."{table}"').fetchall()))
            for schema, table, _ in tables if (schema, table) != ("_serving", "publication")
        }
        content["published from"] = con.execute("select build_database from _serving.publication").fetchall()
        content["descriptions"] = tables + con.execute(
            "select schema_name, table_name, column_name, data_type, comment from duckdb_columns() order by all"
        ).fetchall()
    return content


def test_publishing_again_writes_what_changed_and_equals_a_fresh_copy(lesson: Warehouse, tmp_path: Path) -> None:
    """A serving copy published over the last one (only the runs computed since are written) holds what a copy
    written from scratch holds, after builds that were not published, a replaced run and a removed one; and it
    never holds the raw tables, the build records or a view."""
    warehouse = lesson.copy(tmp_path / "build")
    serving = tmp_path / "serving.duckdb"
    publish(warehouse.db_path, serving)
    warehouse.ranked("--retriever", "bm25").built()  # built, not published to `serving` (the command's is beside)
    warehouse.ranked("--retriever", "keyword_normalized").built()
    publish(warehouse.db_path, serving)
    assert served(serving) == served(publish_fresh(warehouse.db_path, tmp_path / "fresh1.duckdb"))
    warehouse.ranked("--retriever", "keyword_normalized").built()  # a new version of that run
    with duckdb.connect(str(warehouse.db_path)) as con:  # a run removed from the raw tables
        con.execute("delete from raw.rankings where run_id = 'bm25'")
        con.execute("delete from raw.question_latencies where run_id = 'bm25'")
        con.execute("delete from raw.runs where run_id = 'bm25'")
    warehouse.built()
    publish(warehouse.db_path, serving)
    content = served(serving)
    assert content == served(publish_fresh(warehouse.db_path, tmp_path / "fresh2.duckdb"))
    assert not [key for key in content if key.startswith(("raw.", "build_state."))]
    with duckdb.connect(str(serving), read_only=True) as con:
        assert con.execute("select count(*) from duckdb_views() where not internal").fetchone() == (0,)
        assert con.execute("select distinct run_id from run_metrics order by 1").fetchall() == [
            ("keyword_normalized",), ("keyword_overlap",)]


def publish_fresh(build: Path, path: Path) -> Path:
    publish(build, path)
    return path
