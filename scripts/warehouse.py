"""Shared plumbing for the scripts: where the DuckDB files are (the build database and its serving copy), the
raw schema, safe writes, and one line, not a stack trace, for a database another process holds.

Everything a script writes goes into the `raw` schema, which dbt reads as sources. Each write runs in one
transaction: on any error it rolls back, so earlier runs and tables stay exactly as they were.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

REPO_ROOT = Path(__file__).resolve().parents[1]
SEEDS_DIR = REPO_ROOT / "seeds"
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
-- the question terms the doc matched, sorted and joined with ', ' (lexical retrievers; null otherwise)
alter table raw.rankings add column if not exists matched_terms varchar;
-- rank.py's cache of document embeddings: reused while the embedded text (title + ' ' + text) is unchanged
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
"""


class InputError(Exception):
    """Bad input or arguments: the message is one line that names what is at fault."""


def database_path(override: str | None = None) -> Path:
    """The DuckDB file: an explicit path, else $RETRIEVAL_DB, else retrieval.duckdb in the repo root."""
    return Path(override or os.environ.get("RETRIEVAL_DB") or REPO_ROOT / "retrieval.duckdb")


def serving_path(build: Path | None = None) -> Path:
    """The serving copy BI tools and notebooks read (scripts/build.py publishes it after a successful build):
    $RETRIEVAL_SERVING_DB, else serving.duckdb next to the build database."""
    override = os.environ.get("RETRIEVAL_SERVING_DB")
    return Path(override) if override else (build or database_path()).parent / "serving.duckdb"


def connect(
    path: Path | str, *, read_only: bool = False, config: Mapping[str, Any] | None = None
) -> duckdb.DuckDBPyConnection:
    """duckdb.connect with DuckDB's own progress bar off: the scripts' output stays one line per result.

    (enable_progress_bar is a per-connection setting: DuckDB refuses it in the connect config.)
    """
    con = duckdb.connect(str(path), read_only=read_only, config=dict(config or {}))
    con.execute("set enable_progress_bar = false")
    return con


LOCK_HOLDER = re.compile(r"Conflicting lock is held in (?P<exe>.*?) \(PID (?P<pid>\d+)\)")


def shown(path: Path) -> str:
    """A path as the user knows it: relative to the working directory when it is under it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def process_command(pid: int, fallback: str) -> str:
    """The command line of process `pid`, on one line and short (/proc/<pid>/cmdline), else `fallback`."""
    try:
        argv = [a.decode(errors="replace") for a in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if a]
    except OSError:
        argv = []
    if not argv:
        return os.path.basename(fallback) or "unknown program"
    command = " ".join([os.path.basename(argv[0]), *argv[1:]])
    command = re.sub(r"\s+", " ", command).strip()
    return command if len(command) <= 80 else command[:77] + "..."


def database_error(script: str, path: Path, exc: duckdb.Error) -> str:
    """One line for a database that cannot be opened. DuckDB's lock conflict says which process holds the file
    and what to do about it; any other error keeps DuckDB's first line."""
    match = LOCK_HOLDER.search(str(exc))
    if match is None:
        first_line = (str(exc).splitlines() or [type(exc).__name__])[0]
        return f"{script}: error: cannot open the database {shown(path)}: {first_line}"
    pid = int(match["pid"])
    return (
        f"{script}: error: {shown(path)} is locked by PID {pid} ({process_command(pid, match['exe'])}): "
        f"close that connection, or point readers at {shown(serving_path(path))} (read-only), then re-run"
    )


def check_identifier(kind: str, value: str) -> str:
    """Collection and run ids must be plain identifiers: letters, digits, '_', '.', '-', no spaces."""
    if not IDENTIFIER.match(value or ""):
        raise InputError(f"{kind} {value!r} is not a plain identifier (letters, digits, '_', '.', '-')")
    return value


@dataclass(frozen=True)
class Ranking:
    """One run's full rankings, column-wise: row i says question_ids[i] ranked doc_ids[i] at ranks[i]."""

    question_ids: Sequence[str]
    doc_ids: Sequence[str]
    ranks: Sequence[int]
    scores: Sequence[float]
    # per row, the question terms the doc matched (any order; stored sorted and joined); None: not reported
    matched_terms: Sequence[Collection[str] | None] | None = None


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


def write_run(
    con: duckdb.DuckDBPyConnection,
    *,
    collection_id: str,
    run_id: str,
    retriever: str,
    parameters: str,
    ranking: Ranking,
) -> int:
    """Replace one run of one collection in raw.runs / raw.rankings, inside the caller's transaction.

    Other runs are never touched. Returns the number of ranking rows written.
    """
    check_identifier("collection", collection_id)
    check_identifier("run id", run_id)
    key = [collection_id, run_id]
    con.execute("delete from raw.rankings where collection_id = ? and run_id = ?", key)
    con.execute("delete from raw.runs where collection_id = ? and run_id = ?", key)
    con.execute(
        """
        insert into raw.runs (collection_id, run_id, retriever, parameters, created_at)
        values (?, ?, ?, ?, cast(now() at time zone 'UTC' as timestamp))
        """,
        [collection_id, run_id, retriever, parameters],
    )
    matched = ranking.matched_terms if ranking.matched_terms is not None else [None] * len(ranking.ranks)
    # Column-wise lists unnest together in one statement: a bulk insert with no Python loop over rows.
    con.execute(
        """
        insert into raw.rankings (collection_id, run_id, question_id, doc_id, rank, score, matched_terms)
        select ?, ?, unnest(?::varchar[]), unnest(?::varchar[]), unnest(?::integer[]), unnest(?::double[]),
            array_to_string(list_sort(unnest(?::varchar[][])), ', ')
        """,
        [
            *key,
            list(ranking.question_ids),
            list(ranking.doc_ids),
            list(ranking.ranks),
            list(ranking.scores),
            [None if terms is None else list(terms) for terms in matched],
        ],
    )
    return len(ranking.doc_ids)


def replace_run(
    con: duckdb.DuckDBPyConnection,
    *,
    collection_id: str,
    run_id: str,
    retriever: str,
    parameters: str,
    ranking: Ranking,
) -> int:
    """Replace one run of one collection in raw.runs / raw.rankings in a single transaction of its own.

    Other runs are never touched. Returns the number of ranking rows written.
    """
    with transaction(con):
        return write_run(
            con, collection_id=collection_id, run_id=run_id, retriever=retriever, parameters=parameters, ranking=ranking
        )


def cached_doc_embeddings(
    con: duckdb.DuckDBPyConnection, collection_id: str, model: str, doc_ids: Sequence[str], texts: Sequence[str]
) -> dict[str, list[float]]:
    """The cached embeddings (by doc id) of the docs whose embedded text is unchanged: same sha256, same model."""
    rows = con.execute(
        """
        select d.doc_id, e.embedding
        from (select unnest(?::varchar[]) as doc_id, unnest(?::varchar[]) as doc_text) as d
        join raw.doc_embeddings as e
            on e.collection_id = ? and e.model = ? and e.doc_id = d.doc_id and e.text_sha256 = sha256(d.doc_text)
        """,
        [list(doc_ids), list(texts), collection_id, model],
    ).fetchall()
    return {doc_id: embedding for doc_id, embedding in rows}


def store_doc_embeddings(
    con: duckdb.DuckDBPyConnection,
    collection_id: str,
    model: str,
    doc_ids: Sequence[str],
    texts: Sequence[str],
    embeddings: Sequence[Sequence[float]],
) -> None:
    """Cache the embeddings of these docs' texts, replacing any stale row of the same (collection, doc, model)."""
    con.execute(
        "delete from raw.doc_embeddings where collection_id = ? and model = ? and list_contains(?::varchar[], doc_id)",
        [collection_id, model, list(doc_ids)],
    )
    con.execute(
        """
        insert into raw.doc_embeddings (collection_id, doc_id, model, text_sha256, embedding)
        select ?, doc_id, ?, sha256(doc_text), embedding
        from (
            select unnest(?::varchar[]) as doc_id, unnest(?::varchar[]) as doc_text, unnest(?::float[][]) as embedding
        )
        """,
        [collection_id, model, list(doc_ids), list(texts), [list(e) for e in embeddings]],
    )
