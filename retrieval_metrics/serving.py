"""The serving copy: after a successful dbt build, the tables the build made are published as serving.duckdb
(or $RETRIEVAL_SERVING_DB), which BI tools and notebooks read read-only.

DuckDB lets one process write a file or many read it, never both. Publishing writes, into a temporary file
beside the serving copy, every table of the build database except the raw tables the commands write and dbt's
build records (schemas raw and build_state): the marts, the seeds, the intermediate tables and the stored test
failures, with their descriptions. The views stay behind (they read the raw tables), and so does the history
of rankings: the copy's size follows the marts, not the number of ranked rows (at ten 10M-line runs, 1.2 GB
copied took 6.5 s; the marts are a tenth of that). It then checks that the copy opens, and os.replace()s it
over the serving copy. The rename is atomic: a reader that has the old serving copy open keeps reading that
complete old version; a process that connects after the swap (with no connection to the old copy still open:
DuckDB shares one open database per file within a process) sees the new build; nobody ever sees half a
build. The copy is written in DuckDB's v1.0.0 storage format, which DuckDB 1.0 and newer read (BI tools bundle
their own DuckDB, often 1.x); $RETRIEVAL_SERVING_STORAGE_VERSION picks another (`latest`: the build's own).
"""

from __future__ import annotations

import os
import shutil
import stat
import uuid
from pathlib import Path

import duckdb

from retrieval_metrics.warehouse import PUBLICATION, connect, sql_literal, written_at


DEFAULT_STORAGE_VERSION = "v1.0.0"  # the oldest format that keeps the tables and their comments: DuckDB 1.0+ reads it


def storage_version() -> str | None:
    """The serving copy's DuckDB storage format: $RETRIEVAL_SERVING_STORAGE_VERSION, else v1.0.0, which every
    maintained DuckDB reader opens (BI tools bundle their own, often 1.x); `latest` writes the build database's
    own format (None), which only a DuckDB as new as this project's reads."""
    wanted = os.environ.get("RETRIEVAL_SERVING_STORAGE_VERSION") or DEFAULT_STORAGE_VERSION
    return None if wanted == "latest" else wanted


def check_unlocked(build: Path) -> None:
    """Open the build database for writing and close it again: raises duckdb.IOException if a process holds it."""
    build.parent.mkdir(parents=True, exist_ok=True)
    with connect(build):
        pass


NOT_SERVED = ("raw", "build_state")  # the commands' raw tables, the last good build's record: the build database's own
PER_RUN_COLUMNS = ("collection_id", "run_id", "fingerprint", "invocation_id")  # a per-run model's rows carry them


def publish(build: Path, serving: Path, storage_version: str | None = None) -> int:
    """Write the build's tables into a new file and rename it over the serving copy, atomically. Returns the
    serving copy's size. With `storage_version` (e.g. "v1.0.0") the file is written in that DuckDB storage
    format, for tools whose DuckDB is older than this project's (a file written by DuckDB 2.0 in its own
    format is readable only by DuckDB 2.0 or newer).

    The new file starts as a byte copy of the current serving copy when there is one in the same format: then
    only what changed is written (see update_tables), so publishing an 11th run costs about what the first did.
    """
    serving.parent.mkdir(parents=True, exist_ok=True)
    temporary = serving.parent / f".{serving.name}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        reused = reusable(build, serving, storage_version)
        if reused:
            with open(serving, "rb") as source_file, open(temporary, "xb") as out:
                shutil.copyfileobj(source_file, out, 1 << 20)
        # The write connection stays open during the copy: it holds DuckDB's lock, so no other process can
        # write the build file while it is read.
        with connect(build) as con:
            options = f" (storage_version {sql_literal(storage_version)})" if storage_version and not reused else ""
            con.execute(f"attach {sql_literal(temporary)} as __serving_copy{options}")
            update_tables(con, "__serving_copy")
            con.execute("detach __serving_copy")  # checkpoints (and fsyncs) the copy, and closes it
        os.chmod(temporary, stat.S_IMODE(os.stat(build).st_mode))
        with duckdb.connect(str(temporary)) as copy:  # the copy opens; it records its build
            copy.execute(
                f"create or replace table {PUBLICATION} as select cast(now() at time zone 'UTC' as timestamp) "
                "as published_at, ? as build_database, ? as build_written_at",
                [str(build.absolute()), written_at(build)],
            )
        Path(f"{temporary}.wal").unlink(missing_ok=True)
        Path(f"{serving}.wal").unlink(missing_ok=True)  # only a writer leaves one; it would belong to the old file
        size = os.path.getsize(temporary)
        os.replace(temporary, serving)
    except BaseException:
        temporary.unlink(missing_ok=True)
        Path(f"{temporary}.wal").unlink(missing_ok=True)
        raise
    directory = os.open(serving.parent, os.O_RDONLY)
    try:
        os.fsync(directory)  # the rename itself survives a crash
    finally:
        os.close(directory)
    return size


def reusable(build: Path, serving: Path, storage_version: str | None) -> bool:
    """Whether the current serving copy can start the new one: it opens, it was written by publish (it has the
    publication record), and it is in the storage format asked for (by default, the build's)."""
    if not serving.exists():
        return False
    format_of = "select tags['storage_version'] from duckdb_databases() where database_name = current_database()"
    try:
        with duckdb.connect(str(serving), read_only=True) as con:
            (recorded,) = con.execute(
                "select count(*) from duckdb_tables() where schema_name = '_serving' and table_name = 'publication'"
            ).fetchone()
            (served_format,) = con.execute(format_of).fetchone()
    except duckdb.Error:
        return False
    if storage_version is None:
        with connect(build, read_only=True) as con:
            (wanted,) = con.execute(format_of).fetchone()
    else:
        wanted = storage_version
    return bool(recorded) and served_format.rstrip("+") == wanted.rstrip("+")


def update_tables(con: duckdb.DuckDBPyConnection, target: str) -> None:
    """Make the attached database `target` hold every table of the build database but NOT_SERVED's, with the
    descriptions of the tables and columns (dbt's persist_docs).

    A table of a per-run model (its rows carry PER_RUN_COLUMNS) whose columns are unchanged keeps its rows of the
    runs whose fingerprint and dbt invocation are the same as when they were served, and gets the rows of the other
    runs from the build; any other table is written whole. So a copy kept from the last publish gets only the runs
    computed since, whatever builds ran in between."""
    source = con.execute("select current_database()").fetchone()[0]
    tables = con.execute(
        "select schema_name, table_name, comment from duckdb_tables() "
        "where database_name = ? and not temporary and not list_contains(?::varchar[], schema_name) "
        "order by schema_name, table_name",
        [source, [*NOT_SERVED]],
    ).fetchall()
    served = {(schema, table) for schema, table in con.execute(
        "select schema_name, table_name from duckdb_tables() where database_name = ? and schema_name <> '_serving'",
        [target]).fetchall()}  # fmt: skip
    for schema, table in sorted(served - {(schema, table) for schema, table, _ in tables}):
        con.execute(f"drop table {target}.{quoted(schema)}.{quoted(table)}")
    con.execute(f"create schema if not exists {target}._serving")
    for schema, table, comment in tables:
        name = f"{quoted(schema)}.{quoted(table)}"
        table_columns = columns(con, source, schema, table)
        per_run = set(PER_RUN_COLUMNS) <= {column for column, _ in table_columns}
        if (schema, table) in served and per_run and table_columns == columns(con, target, schema, table):
            # the runs whose served rows are not the build's: gone, recomputed, or new
            keys = ", ".join(PER_RUN_COLUMNS)
            stale = f"""
                (select distinct {keys} from {target}.{name} except select distinct {keys} from {quoted(source)}.{name})
                union
                (select distinct {keys} from {quoted(source)}.{name} except select distinct {keys} from {target}.{name})
            """
            runs = [(collection, run) for collection, run, *_ in con.execute(stale).fetchall()]
            if runs:
                condition = runs_condition(runs)
                con.execute(f"delete from {target}.{name} where {condition}")
                con.execute(f"insert into {target}.{name} select * from {quoted(source)}.{name} where {condition}")
        else:
            con.execute(f"drop table if exists {target}.{name}")
            con.execute(f"create schema if not exists {target}.{quoted(schema)}")
            con.execute(f"create table {target}.{name} as select * from {quoted(source)}.{name}")
            describe(con, source, target, schema, table, comment)


def columns(con: duckdb.DuckDBPyConnection, database: str, schema: str, table: str) -> list[tuple[str, str]]:
    return con.execute(
        "select column_name, data_type from duckdb_columns() where database_name = ? and schema_name = ? "
        "and table_name = ? order by column_index",
        [database, schema, table],
    ).fetchall()


def describe(con: duckdb.DuckDBPyConnection, source: str, target: str, schema: str, table: str, comment: str) -> None:
    """Copy the descriptions of a table and of its columns from the build database to the copy."""
    name = f"{quoted(schema)}.{quoted(table)}"
    if comment:
        con.execute(f"comment on table {target}.{name} is {sql_literal(comment)}")
    for column, column_comment in con.execute(
        "select column_name, comment from duckdb_columns() where database_name = ? and schema_name = ? "
        "and table_name = ? and comment is not null order by column_index",
        [source, schema, table],
    ).fetchall():
        con.execute(f"comment on column {target}.{name}.{quoted(column)} is {sql_literal(column_comment)}")


def runs_condition(runs: list[tuple[str, str]]) -> str:
    """(collection_id, run_id) in the given runs, as constants: DuckDB skips the other runs' row groups."""
    pairs = ", ".join(f"({sql_literal(collection)}, {sql_literal(run)})" for collection, run in sorted(set(runs)))
    return f"(collection_id, run_id) in ({pairs})"


def quoted(identifier: str) -> str:
    """A SQL identifier in double quotes."""
    return '"' + identifier.replace('"', '""') + '"'
