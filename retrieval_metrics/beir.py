"""A BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) read by DuckDB into temp tables and checked:
documents_in (doc_id, title, doc_text), questions_in (question_id, question_text) and qrels_in, the shapes
raw_tables.replace_judgments takes. Errors name the file and, where it can be found, the line.

Refused, so that nothing imported can fail a later build: an `_id` that is not a JSON string (`"_id": 3`: no
coercion), a document without `text` (or a null one), a qrels file whose first line is not the header
query-id, corpus-id, score (tab-separated), and a judgment of a question the queries do not have or of a
document the corpus does not have."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb

from retrieval_metrics.trec import SQL_BAD_GRADE, at, check_unique, keep_judgments
from retrieval_metrics.warehouse import InputError, sql_literal

# (file name, temp table, JSON columns, the renamed columns the raw tables take). `_id` is read as JSON, to tell
# a string from a number; `id_text` is its string.
JSON_FILES = (
    ("corpus.jsonl", "documents_in", "{'_id': 'json', 'title': 'varchar', 'text': 'varchar'}",
     "id_text as doc_id, title, text as doc_text"),
    ("queries.jsonl", "questions_in", "{'_id': 'json', 'text': 'varchar'}",
     "id_text as question_id, text as question_text"),
)  # fmt: skip
QRELS_HEADER = ("query-id", "corpus-id", "score")  # the first line of a BEIR qrels file, tab-separated


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
                f"create or replace temp table beir_{table} as select *, _id ->> '$' as id_text "
                f"from read_json({sql_literal(path)}, format = 'newline_delimited', columns = {columns})"
            )
        except duckdb.Error as exc:
            raise InputError(f"{path}: not valid JSON lines ({str(exc).splitlines()[0]})") from None
        count = con.execute(f"select count(*) from beir_{table}").fetchone()[0]
        if count == 0:
            raise InputError(f"{path}: empty file")
        rows += count
    check_qrels_header(qrels)
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
        path = folder / name
        not_text = con.execute(
            f"select _id from beir_{table} where json_type(_id) not in ('VARCHAR', 'NULL') limit 1"
        ).fetchone()
        if not_text:
            line = line_of_record(path, lambda record: not isinstance(record.get("_id"), (str, type(None))))
            raise InputError(f"{at(path, line)}: _id {not_text[0]} must be a string")
        problem = con.execute(
            f"select id_text from beir_{table} group by id_text having id_text is null or count(*) > 1 limit 1"
        ).fetchone()
        if problem:
            key = problem[0]
            line = line_of_id(path, key)
            raise InputError(f"{at(path, line)}: " + ("missing _id" if key is None else f"duplicate _id {key!r}"))
        con.execute(f"create or replace temp table {table} as select {renamed} from beir_{table}")
    corpus = folder / JSON_FILES[0][0]
    textless = con.execute("select doc_id from documents_in where doc_text is null limit 1").fetchone()
    if textless:
        line = line_of_record(corpus, lambda record: record.get("_id") == textless[0])
        raise InputError(f"{at(corpus, line)}: doc {textless[0]!r} has no text")
    qrels = qrels_file(folder, split)
    bad = con.execute(
        f"select relevance from qrels_text where question_id is null or doc_id is null or {SQL_BAD_GRADE} limit 1"
    ).fetchone()
    if bad:
        raise InputError(f"{qrels}: score {bad[0]!r} is not an integer (or a column is empty)")
    check_unique(con, qrels, "qrels_text", "judgment")
    unknown = con.execute(
        "select question_id, doc_id from qrels_text as judged "
        "where not exists (select 1 from questions_in as questions where questions.question_id = judged.question_id) "
        "order by question_id, doc_id limit 1"
    ).fetchone()
    if unknown:
        line = line_of_judgment(qrels, *unknown)
        queries = folder / JSON_FILES[1][0]
        raise InputError(f"{at(qrels, line)}: question {unknown[0]!r} is not a question of {queries.name}")
    unknown = con.execute(
        "select question_id, doc_id from qrels_text as judged "
        "where not exists (select 1 from documents_in as docs where docs.doc_id = judged.doc_id) "
        "order by question_id, doc_id limit 1"
    ).fetchone()
    if unknown:
        line = line_of_judgment(qrels, *unknown)
        raise InputError(f"{at(qrels, line)}: doc {unknown[1]!r} is not a document of {corpus.name}")
    keep_judgments(con)


def check_qrels_header(qrels: Path) -> None:
    """InputError unless the qrels file's first line is the header QRELS_HEADER (without it, DuckDB would take
    the first judgment for the header)."""
    with qrels.open(encoding="utf-8", errors="replace") as handle:
        first = handle.readline()
    if not first:
        raise InputError(f"{qrels}: empty file")
    header = first.rstrip("\r\n")
    if tuple(header.split("\t")) != QRELS_HEADER:
        raise InputError(f"{qrels}:1: expected the header {', '.join(QRELS_HEADER)} (tab-separated), not {header!r}")


def line_of_judgment(qrels: Path, question_id: str, doc_id: str) -> int | None:
    """Line of the qrels file's judgment of (question, doc): the error path only."""
    with qrels.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if line.rstrip("\r\n").split("\t")[:2] == [question_id, doc_id]:
                return number
    return None


def line_of_record(path: Path, matches: Callable[[dict[str, Any]], bool]) -> int | None:
    """Line of the first JSON record (an object) that `matches`: the error path only."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and matches(record):
                return number
    return None


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
