"""The build as a service: `import --build` and `build`, with dbt in this process (loaded once and kept for the
notebook's next build), and the serving copy published after each good build. The command line (cli.py), the
notebook API (api.py) and Spark builds call these; each failure is a CommandFailed or an InputError carrying the
one line the command prints.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from retrieval_metrics.settings import check_vars, given_vars
from retrieval_metrics.warehouse import (
    PROG,
    RAW_SCHEMA_DDL,
    CommandFailed,
    InputError,
    connect,
    database_error,
    serving_path,
    shown,
    transaction,
)

if TYPE_CHECKING:
    from retrieval_metrics.dbt_runner import InProcessDbt
    from retrieval_metrics.importing import ImportRequest
    from retrieval_metrics.up_to_date import Inputs


def import_and_build(request: ImportRequest, database: Path, desc: str, dbt_vars: str | None = None) -> str:
    """`import` then `build`, in this process: dbt is loaded (imported, the project parsed) on this thread
    while the import reads the file on another; then dbt builds what depends on the raw tables, without the
    tests of what the import guarantees. The import commits first, as `import` alone does; a failed build
    leaves it, and the serving copy, as they were, as `build` alone does. When the last good `build` recorded
    the same project and settings (its --vars too; retrieval_metrics.up_to_date), dbt builds only what reads the raw tables
    the import changed, and the record is kept up to date, so that a `build` after it has nothing to do."""
    import multiprocessing  # noqa: F401 - imported here, before the threads: dbt's load and the import both use it,
    import time  # and two threads importing it at once can see it half-initialized (seen once in CI: exit 1)
    from concurrent.futures import ThreadPoolExecutor

    from retrieval_metrics.dbt_runner import COMMAND_BUILD_EXCLUDES, IMPORT_GUARANTEES, DbtFailed
    from retrieval_metrics.importing import import_collection
    from retrieval_metrics.up_to_date import build_inputs, last_build, record_build

    request.check()
    database, serving = build_paths(database)
    settings = ["--vars", dbt_vars] if dbt_vars else []
    check_vars(None, settings)  # the runs named may be the one being imported: not looked up
    last = last_build(database)  # what the last good `build` (or `import --build`) recorded
    recorded = last is not None and build_inputs(database, settings).base == last[0].base
    started = time.perf_counter()
    finished: dict[str, float] = {}
    with ThreadPoolExecutor(max_workers=1) as pool:
        imported = pool.submit(import_collection, database, request, desc)
        imported.add_done_callback(lambda _: finished.setdefault("import", time.perf_counter() - started))
        try:
            dbt = loaded_dbt(database, settings)
        except DbtFailed as exc:
            imported.result()  # the import's own error first, if it has one
            raise CommandFailed(f"{exc}; the import was committed, nothing was built", 1) from None
        loaded = time.perf_counter() - started
        summary = imported.result()  # the import's InputError, if any, before anything is built
    waited = time.perf_counter() - started
    selection = ["--select", "source:raw+"] if is_built(database) else []
    if recorded and last is not None:
        changed = changed_sources(build_inputs(database, settings), last[0])
        selection = source_selection(changed, database) if changed else selection
    build_started = datetime.now(UTC)
    say_building(f"{PROG} import")
    outcome = dbt.build([*selection, *settings, *COMMAND_BUILD_EXCLUDES, *IMPORT_GUARANTEES])
    if not outcome.passed:
        done = f"collection {request.collection_id}: {summary}, committed; then "
        raise build_failed(build_started, outcome.stopped, 1, f"{shown(serving)} left as it was", database,
                           command="import", done=done)  # fmt: skip
    build_seconds = time.perf_counter() - started - waited
    if recorded or not selection:  # a build the record vouched for, or a whole one; before publishing, as build does
        record_build(database, build_inputs(database, settings))
    warned = build_warnings(build_started, database, f"{PROG} import")
    published = publish_serving(database, serving)
    return (f"collection {request.collection_id}: {summary}; import {finished['import']:.1f} s, dbt loaded "
            f"alongside in {loaded:.1f} s, then built in {build_seconds:.1f} s; {published}{warned}")  # fmt: skip


def build_warnings(started: datetime, database: Path, prefix: str) -> str:
    """Print on stderr one line per node of the build just run (since `started`) that warned (a data test of
    severity warn that found rows: a question no run can score, a run's question its collection lacks), with its
    first rows; the clause the build's summary ends with ('' if none)."""
    from retrieval_metrics.dbt_runner import node_warnings

    warnings = node_warnings(started, database)
    for warning in warnings:
        where = f"; first: {'; '.join(warning.examples)}" if warning.examples else ""
        print(f"{prefix}: warning: {warning.node}: {warning.message}{where}", file=sys.stderr, flush=True)
    if not warnings:
        return ""
    return f"; {len(warnings)} warning{'s' if len(warnings) != 1 else ''} (above)"


def say_building(prefix: str) -> None:
    """The line a build prints as dbt starts: where dbt's own lines go (unless --verbose shows them)."""
    from retrieval_metrics.dbt_runner import SHOWN, log_path

    if not SHOWN["dbt_lines"]:
        print(f"{prefix}: dbt build running; its lines go to {shown(log_path())} (--verbose shows them)", flush=True)


def is_built(database: Path) -> bool:
    """Whether every mart exists: a build of what depends on the raw tables is then enough."""
    from retrieval_metrics.warehouse import MARTS

    with connect(database, read_only=True) as con:
        present = {name for (name,) in con.execute(
            "select table_name from information_schema.tables where table_schema = 'main'").fetchall()}  # fmt: skip
    return set(MARTS) <= present


def build_paths(database: Path) -> tuple[Path, Path]:
    """The build database and its serving copy, absolute; InputError if they are the same file."""
    database = database.absolute()
    serving = serving_path(database).absolute()
    if serving == database:
        raise InputError(f"the serving copy and the build database are the same file {shown(database)}: "
                         "set RETRIEVAL_SERVING_DB to another path")  # fmt: skip
    return database, serving


def add_missing_raw_tables(database: Path) -> None:
    """Create the raw tables (dbt sources) and columns a warehouse written by an earlier version lacks (each
    write command creates them all: RAW_SCHEMA_DDL), so that its first build with this version finds every
    source and column. A warehouse never written is left to dbt's one-line refusal (macros/check_raw_sources.sql)."""
    if not database.exists():
        return
    with connect(database, read_only=True) as con:
        present = {name for (name,) in con.execute(
            "select table_name from duckdb_tables() where schema_name = 'raw'").fetchall()}  # fmt: skip
        columns = set(con.execute("select table_name, column_name from duckdb_columns() where schema_name = 'raw'"
                                  ).fetchall())  # fmt: skip
    added = set(re.findall(r"alter table raw\.(\w+) add column if not exists (\w+)", RAW_SCHEMA_DDL))
    if "runs" in present and (raw_sources() - present or added - columns):
        with connect(database) as con, transaction(con):
            pass  # the transaction creates the raw tables and columns that are missing


def check_unlocked(database: Path) -> None:
    from retrieval_metrics.serving import check_unlocked as open_and_close

    open_and_close(database)


def publish_serving(database: Path, serving: Path) -> str:
    """Publish the serving copy of a database just built; one line saying so."""
    from retrieval_metrics.serving import publish, storage_version

    try:
        size = publish(database, serving, storage_version())
    except duckdb.IOException:
        raise
    except (OSError, RuntimeError, duckdb.Error) as exc:
        raise InputError(f"could not publish {shown(serving)}: {str(exc).splitlines()[0]}; it was left as it was")
    return (f"published {shown(serving)} ({size / 2**20:.1f} MiB), the tables of {shown(database)}; "
            "BI tools and notebooks read it read-only")  # fmt: skip


LOADED: dict[tuple[object, ...], InProcessDbt] = {}  # dbt loaded in this process, by what it parsed
PARSE_OPTIONS = ("--vars", "--target", "-t", "--profile")  # the dbt options a parse depends on


def loaded_dbt(database: Path, dbt_args: Sequence[str]) -> InProcessDbt:
    """dbt loaded in this process to build `database`: imported and the project parsed once per project version,
    parse options and database name, then kept, so that the notebook's next rm.build() starts at once. The name
    is the file's stem, dbt's name of the database and all a parse reads of it: a file of the same name elsewhere
    builds on the same parse (dbt would parse again for a new path, as a change of profile). A new project version
    or other options load it again (and drop the one loaded before)."""
    from retrieval_metrics.dbt_runner import InProcessDbt, project_dir
    from retrieval_metrics.up_to_date import files_digest

    parse = [arg for i, arg in enumerate(dbt_args) if arg.startswith(tuple(o + "=" for o in PARSE_OPTIONS))
             or arg in PARSE_OPTIONS or (i and dbt_args[i - 1] in PARSE_OPTIONS)]  # fmt: skip
    key = (database.stem, str(project_dir()), files_digest(project_dir()), tuple(parse), os.environ.get("DBT_TARGET"))
    if key not in LOADED:
        LOADED.clear()
        dbt = InProcessDbt(database)
        dbt.load(parse)
        LOADED[key] = dbt
    LOADED[key].database = database.absolute()
    return LOADED[key]


def build_database(database: Path, dbt_args: Sequence[str], prefix: str = f"{PROG} build") -> str:
    """dbt build on the database, then publish its serving copy; one line saying so, or CommandFailed. dbt runs
    in this process (loaded_dbt: kept for the notebook's next rm.build()). With `--target spark`, the build runs
    on Spark instead, from the database's raw tables (retrieval_metrics.spark). Each node that warned gets a line
    on stderr, after `prefix` (build_warnings)."""
    from retrieval_metrics.dbt_runner import COMMAND_BUILD_EXCLUDES, IMPORT_GUARANTEES, DbtFailed, target_of

    if target_of(dbt_args) == "spark":
        return build_on_spark(database.absolute(), dbt_args)
    from retrieval_metrics.up_to_date import (
        build_inputs,
        last_build,
        record_build,
        selects_nodes,
        serving_is_current,
        take_force,
    )

    database, serving = build_paths(database)
    add_missing_raw_tables(database)
    dbt_args, force = take_force(dbt_args)
    check_vars(database, dbt_args)
    last = None if force else last_build(database)
    inputs = build_inputs(database, dbt_args) if last else None
    selection: list[str] = []
    if last and inputs and inputs.base == last[0].base:
        changed = changed_sources(inputs, last[0])
        if not changed:
            if inputs != last[0]:  # rows changed in raw tables no model reads (the dense retriever's cache)
                record_build(database, inputs)
            if not serving_is_current(database, serving):  # missing, or the build file was written since
                return publish_serving(database, serving)
            return (f"nothing to build: the project, settings and raw tables are unchanged since the last build "
                    f"({last[1]:%Y-%m-%d %H:%M:%S} UTC), and so are its tables and {shown(serving)}; "
                    "build --force builds anyway")  # fmt: skip
        if not selects_nodes(dbt_args):
            selection = source_selection(changed, database)
    started, kept = datetime.now(UTC), f"{shown(serving)} left as it was"
    say_building(prefix)
    try:
        guaranteed = [] if checks_every_run(dbt_args) else IMPORT_GUARANTEES
        outcome = loaded_dbt(database, dbt_args).build([*COMMAND_BUILD_EXCLUDES, *guaranteed, *selection, *dbt_args])
    except DbtFailed as exc:
        raise CommandFailed(f"{exc}; {kept}", 1) from None
    if not outcome.passed:
        try:
            check_unlocked(database)  # a reader that opened the file while dbt ran: say so in one line
        except duckdb.IOException as exc:
            raise CommandFailed(f"{database_error(database, exc)}; {kept}", 1) from None
        raise build_failed(started, outcome.stopped, 1, kept, database)
    # recorded first: publishing takes the build file's modification time, which readers compare (source_line)
    record_build(database, build_inputs(database, dbt_args))
    warned = build_warnings(started, database, prefix)
    return publish_serving(database, serving) + warned


def raw_sources() -> set[str]:
    """The raw tables the project reads: its dbt sources in schema raw."""
    import yaml

    from retrieval_metrics.dbt_runner import project_dir

    sources = yaml.safe_load((project_dir() / "models" / "staging" / "_raw__sources.yml").read_text())["sources"]
    return {table["name"] for source in sources if source["name"] == "raw" for table in source["tables"]}


def changed_sources(inputs: Inputs, last: Inputs) -> list[str]:
    """The raw tables the project reads whose rows changed since the `last` build recorded them."""
    sources = raw_sources()
    return [table for table in inputs.changed_raw_tables(last) if table in sources]


def checks_every_run(dbt_args: Sequence[str]) -> bool:
    """Whether a build checks every run and what the writers guarantee (the tests tagged guaranteed_by_import:
    the raw tables' keys and references, which import, rank and write_run enforce before they commit): under
    --full-refresh, or --vars with test_all_runs true. Otherwise the commands' builds leave those tests out."""
    return "--full-refresh" in dbt_args or given_vars(dbt_args).get("test_all_runs") in (True, "true", "True")


def empty_without() -> dict[str, tuple[str, str]]:
    """The nodes that hold rows only when a raw table has rows of some kind, as dbt selectors (with `+`: everything
    that reads the model too): selector -> (raw table, condition on its rows). The judges' leaderboards measure the
    runs on the pairs an automatic judge graded; the judging queue and its coverage list the pooled runs' documents;
    the changes between qrels versions need a second version, which only `import --judgments` writes; the values of
    users' Python measures need a collection that defines one (what reads them reads other measures too)."""
    from retrieval_metrics.judging import AUTOMATIC

    return {
        "int_judge_question_measures+": ("judgments", f"judge_kind = '{AUTOMATIC}'"),
        "judging_queue+": ("judging_pools", "true"),
        "qrels_version_changes+": ("judgment_versions", "true"),
        "int_user_measure_values": ("collection_settings", "setting = 'user_measures'"),
    }


def source_selection(tables: list[str], database: Path) -> list[str]:
    """dbt's selection of the tables and tests that read these raw tables: not the views (the build's base, which
    their SQL depends on, is the last good build's: they stand as it made them; an --exclude would drop their
    tests too), and without each node of empty_without() while its raw table is not among these and has no row of
    its kind: the node was empty at the last good build and stays so whatever the other tables (a notebook's loop
    of new runs would pay for them at every build)."""
    kinds = ("config.materialized:table", "config.materialized:incremental", "resource_type:test")
    selection = ["--select", *(f"source:raw.{table}+,{kind}" for table in tables for kind in kinds)]
    with connect(database, read_only=True) as con:
        for selector, (table, condition) in empty_without().items():
            if table in tables:  # changed: what reads it is built
                continue
            if con.execute(f"select count(*) from raw.{table} where {condition}").fetchone() == (0,):
                selection += ["--exclude", selector]
    return selection


def build_on_spark(database: Path, dbt_args: Sequence[str]) -> str:
    """The build on Spark, from the database's raw tables (retrieval_metrics.spark); its failed nodes are named as
    on DuckDB, without their rows (they are in Spark's tables)."""
    from retrieval_metrics.spark import run_on_spark

    from retrieval_metrics.dbt_runner import IMPORT_GUARANTEES

    check_vars(database, dbt_args)
    guaranteed = [] if checks_every_run(dbt_args) else IMPORT_GUARANTEES  # as on DuckDB: the same raw tables
    built = run_on_spark(database, [*guaranteed, *dbt_args])
    if built.code != 0:
        raise build_failed(built.started, None, built.code, "the marts of the last good Spark build kept",
                           target_path=built.target_path, done=f"{built.published}; then on Spark: ")  # fmt: skip
    return f"{built.published}; built on Spark: the marts are Parquet tables in {shown(built.marts)}"


def build_failed(
    started: datetime,
    stopped: str | None,
    code: int,
    kept: str,
    database: Path | None = None,
    *,
    target_path: Path | None = None,
    command: str = "build",
    done: str = "",
) -> CommandFailed:
    """The failed build (exit `code`; `stopped`: dbt's error that stopped it before any node ran) in one line after
    `done`, saying what was `kept`, after one line per failed node on stderr (the node, why and, given the
    database, the keys of its first offending rows). Exit 2 when the input is at fault (a data test failed, a var
    was refused), else dbt's."""
    from retrieval_metrics.dbt_runner import log_path, node_failures

    log = f"dbt's log: {shown(log_path())}"
    if stopped is not None:  # before any node ran: a var refused by the project's macros, a broken project
        return CommandFailed(f"{done}dbt build stopped: {stopped}; {kept}; {log}", 2 if "var " in stopped else code)
    failures = node_failures(started, database, target_path)
    for failure in failures[:10]:
        print(f"{PROG} {command}: {failure.line()}", file=sys.stderr)
    if len(failures) > 10:
        print(f"{PROG} {command}: ... and {len(failures) - 10} more", file=sys.stderr)
    user_error = bool(failures) and all(f.status == "fail" or "var " in f.message for f in failures)
    what = (f"{len(failures)} node{'s' if len(failures) != 1 else ''} failed, the first {failures[0].kind} "
            f"{failures[0].node}" if failures else f"exit {code}")  # fmt: skip
    advice = "; fix the rows or the settings named above and build again" if user_error else ""
    return CommandFailed(f"{done}dbt build failed ({what}){advice}; {kept}; {log}", 2 if user_error else code)
