"""Shared plumbing for the scripts: where the DuckDB file is, the raw schema, and safe writes.

Everything a script writes goes into the `raw` schema, which dbt reads as sources. Each write runs in one
transaction: on any error it rolls back, so earlier runs and tables stay exactly as they were.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

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


def replace_run(
    con: duckdb.DuckDBPyConnection,
    *,
    collection_id: str,
    run_id: str,
    retriever: str,
    parameters: str,
    ranking: Ranking,
) -> int:
    """Replace one run of one collection in raw.runs / raw.rankings in a single transaction.

    Other runs are never touched. Returns the number of ranking rows written.
    """
    check_identifier("collection", collection_id)
    check_identifier("run id", run_id)
    con.execute("begin transaction")
    try:
        con.execute(RAW_SCHEMA_DDL)
        key = [collection_id, run_id]
        con.execute("delete from raw.rankings where collection_id = ? and run_id = ?", key)
        con.execute("delete from raw.runs where collection_id = ? and run_id = ?", key)
        con.execute(
            "insert into raw.runs values (?, ?, ?, ?, cast(now() at time zone 'UTC' as timestamp))",
            [collection_id, run_id, retriever, parameters],
        )
        # Column-wise lists unnest together in one statement: a bulk insert with no Python loop over rows.
        con.execute(
            """
            insert into raw.rankings (collection_id, run_id, question_id, doc_id, rank, score)
            select ?, ?, unnest(?::varchar[]), unnest(?::varchar[]), unnest(?::integer[]), unnest(?::double[])
            """,
            [*key, list(ranking.question_ids), list(ranking.doc_ids), list(ranking.ranks), list(ranking.scores)],
        )
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    return len(ranking.doc_ids)
