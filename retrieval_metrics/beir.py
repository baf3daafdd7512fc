"""A BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) read by DuckDB into temp tables and checked:
documents_in (doc_id, title, doc_text), questions_in (question_id, question_text) and qrels_in, the shapes
raw_tables.replace_judgments takes. Errors name the file and, where it can be found, the line."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from retrieval_metrics.trec import SQL_BAD_GRADE, at, check_unique, keep_judgments
from retrieval_metrics.warehouse import InputError, sql_literal

# (file name, temp table, JSON columns, the renamed columns the raw tables take)
JSON_FILES = (
    ("corpus.jsonl", "documents_in", "{'_id': 'varchar', 'title': 'varchar', 'text': 'varchar'}",
     "_id as doc_id, title, text as doc_text"),
    ("queries.jsonl", "questions_in", "{'_id': 'varchar', 'text': 'varchar'}",
     "_id as question_id, text as question_text"),
)  # fmt: skip


def qrels_file(folder: Path, split: str) -> Path:
    return folder / "qrels" / f"{split}.tsv"


def parse_beir(con: duckdb.DuckDBPyConnection, folder: Path, split: str) -> int:
    """A BEIR folder -> temp tables beir_corpus, beir_queries (as in the files) and qrels_text. Returns the rows
    read."""
    qrels = qrels_file(folder, split)
    for path in (*(folder / name for name, *_ in JSON_FILES), qrels):
        if not path.is_file():
            raise InputError(f"{path}: no such file (a BEIR folder has corpus.jsonl, queries.jsonl, qrels/{split}.tsv)")
    rows = 0
    for name, table, columns, _ in JSON_FILES:
        path = folder / name
        try:
            con.execute(
                f"create or replace temp table beir_{table} as select * from read_json({sql_literal(path)}, "
                f"format = 'newline_delimited', columns = {columns})"
            )
        except duckdb.Error as exc:
            raise InputError(f"{path}: not valid JSON lines ({str(exc).splitlines()[0]})") from None
        count = con.execute(f"select count(*) from beir_{table}").fetchone()[0]
        if count == 0:
            raise InputError(f"{path}: empty file")
        rows += count
    try:
        con.execute(
            f"create or replace temp table qrels_text as select * from read_csv({sql_literal(qrels)}, "
            "delim = '\t', header = true, quote = '', escape = '', auto_detect = false, "
            "columns = {'question_id': 'varchar', 'doc_id': 'varchar', 'relevance': 'varchar'})"
        )
    except duckdb.Error as exc:
        raise InputError(f"{qrels}: expected 3 tab-separated columns ({str(exc).splitlines()[0]})") from None
    return rows + con.execute("select count(*) from qrels_text").fetchone()[0]


def check_beir(con: duckdb.DuckDBPyConnection, folder: Path, split: str) -> None:
    """The parsed folder checked (one record per _id, integer grades, one judgment per pair) -> documents_in,
    questions_in, qrels_in."""
    for name, table, _, renamed in JSON_FILES:
        problem = con.execute(
            f"select _id from beir_{table} group by _id having _id is null or count(*) > 1 limit 1"
        ).fetchone()
        if problem:
            key = problem[0]
            path = folder / name
            line = line_of_id(path, key)
            raise InputError(f"{at(path, line)}: " + ("missing _id" if key is None else f"duplicate _id {key!r}"))
        con.execute(f"create or replace temp table {table} as select {renamed} from beir_{table}")
    qrels = qrels_file(folder, split)
    bad = con.execute(
        f"select relevance from qrels_text where question_id is null or doc_id is null or {SQL_BAD_GRADE} limit 1"
    ).fetchone()
    if bad:
        raise InputError(f"{qrels}: score {bad[0]!r} is not an integer (or a column is empty)")
    check_unique(con, qrels, "qrels_text", "judgment")
    keep_judgments(con)


def line_of_id(path: Path, key: str | None) -> int | None:
    """Line of the second record with _id `key` (or the first without an _id): the error path only."""
    seen = 0
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record_id = json.loads(line).get("_id")
            except (json.JSONDecodeError, AttributeError):
                continue
            record_id = None if record_id is None else str(record_id)
            if record_id == key:
                seen += 1
                if key is None or seen == 2:
                    return number
    return None
