"""The warehouse file: where it is, how to open it, the raw schema every writer fills, and the one-line errors
for bad input and for a database another process holds.

Everything the package writes goes into the `raw` schema, which dbt reads as sources, inside one
transaction: on any error it rolls back, so earlier runs and tables stay exactly as they were.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timedelta
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

REPO_ROOT = Path(__file__).resolve().parents[1]  # the dbt project this package drives
PROG = "retrieval-metrics"  # the command, as its lines name it
IDENTIFIER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
SEEDED_COLLECTION = "docent"  # its documents, questions and judgments are the dbt seeds, never imported

RAW_SCHEMA_DDL = """
create schema if not exists raw;
create table if not exists raw.runs (
    collection_id varchar not null,
    run_id varchar not null,
    retriever varchar not null,
    parameters varchar not null,
    created_at timestamp not null
);
create table if not exists raw.rankings (
    collection_id varchar not null,
    run_id varchar not null,
    question_id varchar not null,
    doc_id varchar not null,
    rank integer not null,
    score double
);
-- a new version at every write of the run: the per-run models recompute a run whose version changed
alter table raw.runs add column if not exists run_version varchar;
-- the question terms the doc matched, sorted and joined with ', ' (lexical retrievers; null otherwise)
alter table raw.rankings add column if not exists matched_terms varchar;
-- the time a retriever took per question, where the run reports it (built-in and plug-in retrievers, the API)
create table if not exists raw.question_latencies (
    collection_id varchar not null,
    run_id varchar not null,
    question_id varchar not null,
    latency_ms double not null
);
-- a chunk run as it was given (one row per chunk), beside its document ranking in raw.rankings
create table if not exists raw.chunk_rankings (
    collection_id varchar not null,
    run_id varchar not null,
    question_id varchar not null,
    chunk_id varchar not null,
    doc_id varchar not null,
    rank integer not null,
    score double not null
);
-- the dense retriever's cache of document embeddings: reused while the embedded text is unchanged
create table if not exists raw.doc_embeddings (
    collection_id varchar not null,
    doc_id varchar not null,
    model varchar not null,
    text_sha256 varchar not null,
    embedding float[] not null
);
create table if not exists raw.documents (
    collection_id varchar not null,
    doc_id varchar not null,
    title varchar,
    doc_text varchar
);
create table if not exists raw.questions (
    collection_id varchar not null,
    question_id varchar not null,
    question_text varchar
);
create table if not exists raw.qrels (
    collection_id varchar not null,
    question_id varchar not null,
    doc_id varchar not null,
    relevance integer not null
);
-- the tags (slices) of an imported collection's questions (`retrieval-metrics import --tags`), one row per tag
create table if not exists raw.question_tags (
    collection_id varchar not null,
    question_id varchar not null,
    tag varchar not null
);
-- judgments imported as versions of a collection's qrels (`retrieval-metrics import --judgments`): append-only,
-- one row per judgment of each version; for a pair, a person's grade (judge_kind 'human') supersedes an
-- automatic judge's, and a later version's the earlier ones of the same kind (int_qrels_unioned)
create table if not exists raw.judgments (
    collection_id varchar not null,
    qrels_version integer not null,
    question_id varchar not null,
    doc_id varchar not null,
    grade integer not null,
    judge varchar not null,
    judge_kind varchar not null,
    note varchar
);
-- one row per qrels version: when, by whom, from what, and what it changed
create table if not exists raw.judgment_versions (
    collection_id varchar not null,
    qrels_version integer not null,
    created_at timestamp not null,
    judge varchar not null,
    judge_kind varchar not null,
    source varchar not null,
    n_judgments integer not null,
    n_new integer not null,
    n_changed integer not null
);
-- an automatic judge's (`retrieval-metrics judge`): each judgment's rationale and the judge call's wall time, and
-- each version's judge version and parameters (JSON, keys sorted); null for label files
alter table raw.judgments add column if not exists rationale varchar;
alter table raw.judgments add column if not exists latency_ms double;
alter table raw.judgment_versions add column if not exists judge_version varchar;
alter table raw.judgment_versions add column if not exists judge_params varchar;
-- a collection's judging pool (`retrieval-metrics pool`): one row per run pooled, each with the pool's depth and
-- method; replaced whole at each `pool` of the collection
create table if not exists raw.judging_pools (
    collection_id varchar not null,
    run_id varchar not null,
    pool_depth integer not null,
    pool_method varchar not null
);
-- a collection's own evaluation settings (`retrieval-metrics settings`), one row per value: k_values has one
-- row per cutoff
create table if not exists raw.collection_settings (
    collection_id varchar not null,
    setting varchar not null,
    value varchar not null
);
"""


class InputError(Exception):
    """Bad input or arguments: the message is one line that names what is at fault."""


class CommandFailed(Exception):
    """A step the command ran (dbt, the benchmark) failed: one line, and that step's exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def database_path(override: str | os.PathLike[str] | None = None) -> Path:
    """The DuckDB file: an explicit path, else $RETRIEVAL_DB, else retrieval.duckdb in the repo root."""
    return Path(override or os.environ.get("RETRIEVAL_DB") or REPO_ROOT / "retrieval.duckdb")


def serving_path(build: Path | None = None) -> Path:
    """The serving copy BI tools and notebooks read: $RETRIEVAL_SERVING_DB, else serving.duckdb beside the
    build database."""
    override = os.environ.get("RETRIEVAL_SERVING_DB")
    return Path(override) if override else (build or database_path()).parent / "serving.duckdb"


def memory_limit() -> str:
    """DuckDB's memory cap for writers (it spills to disk beyond it): $RETRIEVAL_MEMORY_LIMIT or 600MB, the cap
    dbt's profile sets too. A 10M-line import peaks at about 830 MiB under it (910 under 1200MB, in the same
    time), so that `import --build`, with dbt loaded alongside, stays under 1 GiB. A 100M-line import spills its
    ranking window under any cap that fits 2 GiB; it took 8-11% less time with 1200MB (peak 1.5 GB against
    0.85 GB; 1500MB gained nothing more, at 1.8 GB): set RETRIEVAL_MEMORY_LIMIT=1200MB for such files."""
    return os.environ.get("RETRIEVAL_MEMORY_LIMIT", "600MB")


def sql_literal(value: object) -> str:
    """A SQL string literal of str(value): single quotes doubled. For the few places DuckDB takes no
    parameter (a file name in read_csv or COPY, an ATTACH option)."""
    return "'" + str(value).replace("'", "''") + "'"


def connect(
    path: Path | str, *, read_only: bool = False, config: Mapping[str, Any] | None = None
) -> duckdb.DuckDBPyConnection:
    """duckdb.connect with DuckDB's own progress bar off, so commands print one line per result.

    (enable_progress_bar is a per-connection setting: DuckDB refuses it in the connect config.)
    """
    con = duckdb.connect(str(path), read_only=read_only, config=dict(config or {}))
    con.execute("set enable_progress_bar = false")
    return con


# the marts the readers (scorecard, report, export) need: models/marts/{measures,comparisons,judging}
MARTS = ("question_metrics", "run_metrics", "missed_relevant_docs", "run_leaderboard", "measure_catalog",
         "question_measures", "run_measures", "question_comparisons", "run_comparisons", "run_tag_measures",
         "run_tag_comparisons", "run_pair_tests", "measure_anova", "run_letter_groups", "measure_questions_needed",
         "judging_queue", "judging_pool_coverage", "qrels_version_changes",
         "qrels_version_leaderboard_changes", "judge_agreement", "judge_confusion", "judge_leaderboard_agreement")  # fmt: skip


def open_existing(path: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection to a warehouse that must already exist (InputError, naming the file, if not)."""
    if not path.exists():
        raise InputError(f"{shown(path)} does not exist: run `make run` first")
    return connect(path, read_only=True)


def open_built(path: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection to a warehouse that exists and has its marts (InputError naming the file and
    what is missing, if not)."""
    con = open_existing(path)
    try:
        check_built(con, path)
    except InputError:
        con.close()
        raise
    return con


def check_built(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """InputError naming the file and the marts it lacks, if the connection's database has not every mart."""
    present = {name for (name,) in con.execute(
        "select table_name from information_schema.tables "
        "where table_catalog = current_database() and table_schema = 'main'").fetchall()}  # fmt: skip
    missing = [mart for mart in MARTS if mart not in present]
    if missing:
        raise InputError(f"{shown(path)} has no {', '.join(missing)}: run `make build` first")


def reader_path(override: str | os.PathLike[str] | None = None) -> Path:
    """The file a reader (query, scorecard, report, export) opens: an explicit path, else the serving copy,
    which a running import or build never holds (InputError if it has not been published yet)."""
    if override:
        return Path(override)
    serving = serving_path()
    if not serving.exists():
        raise InputError(
            f"no serving copy {shown(serving)} yet: `retrieval-metrics build` (or `make run`) publishes it; "
            f"--db {shown(database_path())} reads the build database instead"
        )
    return serving


PUBLICATION = '"_serving"."publication"'  # in a serving copy: when its build was published, and from which file


def written_at(path: Path) -> datetime:
    """A file's modification time, to the microsecond, UTC (naive, as DuckDB's timestamps)."""
    return datetime(1970, 1, 1) + timedelta(microseconds=path.stat().st_mtime_ns // 1000)


def source_line(con: duckdb.DuckDBPyConnection, path: Path) -> str:
    """Which file a reader reads and which build that is (when it was published), and whether the build database
    has been written since (then it holds changes the serving copy does not show yet): `serving.duckdb, the
    build published at ...`."""
    ((has_record,),) = con.execute(
        "select count(*) from duckdb_tables() where database_name = current_database() "
        "and schema_name = '_serving' and table_name = 'publication'"
    ).fetchall()
    if not has_record:
        return f"{shown(path)}, as last written at {written_at(path):%Y-%m-%d %H:%M:%S} UTC"
    ((published_at, build_database, build_written_at),) = con.execute(
        f"select published_at, build_database, build_written_at from {PUBLICATION}"
    ).fetchall()
    line = f"{shown(path)}, the build published at {published_at:%Y-%m-%d %H:%M:%S} UTC"
    build = Path(build_database)
    if build.exists() and written_at(build) != build_written_at:
        line += f"; {shown(build)} has been written since: `retrieval-metrics build` publishes it"
    return line


def shown(path: Path | str) -> str:
    """A path as the user knows it: relative to the working directory when it is under it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


LOCK_HOLDER = re.compile(r"Conflicting lock is held in (?P<exe>.*?) \(PID (?P<pid>\d+)\)")


def process_command(pid: int, fallback: str) -> str:
    """The command line of process `pid`, on one line and short (/proc/<pid>/cmdline), else `fallback`."""
    try:
        argv = [a.decode(errors="replace") for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]
    except OSError:
        argv = []
    if not argv:
        return os.path.basename(fallback) or "unknown program"
    command = re.sub(r"\s+", " ", " ".join([os.path.basename(argv[0]), *argv[1:]])).strip()
    return command if len(command) <= 80 else command[:77] + "..."


def database_error(path: Path, exc: duckdb.Error) -> str:
    """One line for a database that cannot be opened. DuckDB's lock conflict says which process holds the file
    and what to do about it; any other error keeps DuckDB's first line."""
    match = LOCK_HOLDER.search(str(exc))
    if match is None:
        first_line = (str(exc).splitlines() or [type(exc).__name__])[0]
        return f"cannot open the database {shown(path)}: {first_line}"
    pid = int(match["pid"])
    return (
        f"{shown(path)} is locked by PID {pid} ({process_command(pid, match['exe'])}): "
        f"close that connection, or point readers at {shown(serving_path(path))} (read-only), then re-run"
    )


def check_identifier(kind: str, value: str | None) -> str:
    """Collection and run ids must be plain identifiers: letters, digits, '_', '.', '-', no spaces."""
    if value is None or not IDENTIFIER.fullmatch(value):  # fullmatch: "$" alone also matches before a final "\n"
        raise InputError(f"{kind} {value!r} is not a plain identifier (letters, digits, '_', '.', '-')")
    return value


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """One transaction with the raw schema in place: commit if the block succeeds, else roll back and re-raise."""
    con.execute("begin transaction")
    try:
        con.execute(RAW_SCHEMA_DDL)
        yield
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
