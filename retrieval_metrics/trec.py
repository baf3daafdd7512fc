"""TREC files: a qrels file (`qid iter docno rel`) and a run file (`qid Q0 docno rank score tag`), read in bulk
by DuckDB into temp tables and checked, with errors that name the file and line at fault.

Ids stay text exactly as written ("7", "07" and "007" differ). A run is ranked as trec_eval ranks it: score
descending as a 32-bit float, ties by docno descending compared as strings; the file's rank column is
ignored. A clean run file can be read, checked and ranked in one pass (one_pass_run); any other file goes
through the careful read (read_run), which names the line at fault.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import duckdb

from retrieval_metrics.warehouse import InputError, sql_literal

RUN_FIELDS = ["question_id", "q0", "doc_id", "file_rank", "score", "tag"]
QRELS_FIELDS = ["question_id", "iteration", "doc_id", "relevance"]
NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
INTEGER = re.compile(r"^[+-]?\d+$")
# SQL twins of NUMBER / INTEGER: DuckDB's casts alone also accept '1_000', 'nan', 'inf' and '3.0'
SQL_BAD_SCORE = "(try_cast(score as double) is null or not isfinite(try_cast(score as double)) or contains(score, '_'))"
SQL_BAD_GRADE = "(try_cast(relevance as integer) is null or contains(relevance, '.') or contains(relevance, '_'))"
CSV_OPTIONS = "header = false, quote = '', escape = '', auto_detect = false, strict_mode = true"
# trec_eval's order within a question: score descending as a 32-bit float, then docno descending
TREC_ORDER = "partition by question_id order by cast(score as float) desc, doc_id desc"


def line_of(path: Path, matches: Callable[[list[str]], bool]) -> int | None:
    """1-based number of the first non-blank line whose whitespace-split fields satisfy `matches`."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            parts = line.split()
            if parts and matches(parts):
                return number
    return None


def at(path: Path, line: int | None) -> str:
    return f"{path}:{line}" if line else str(path)


def csv_source(path: Path, fields: list[str]) -> tuple[str, str]:
    """DuckDB's CSV reader over a whitespace-separated file, every field as text, with the file's one
    delimiter (that of its first non-blank line), and the condition true on a line this reader gets wrong: an
    empty field (a run of delimiters) or the other blank inside a field (mixed blanks). InputError for a
    missing or empty file."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    with path.open(encoding="utf-8", errors="replace") as handle:
        first = next((line for line in handle if line.strip()), None)
    if first is None:
        raise InputError(f"{path}: empty file")
    delimiter, other_blank = ("\t", " ") if "\t" in first else (" ", "\t")
    columns = "{" + ", ".join(f"'{f}': 'varchar'" for f in fields) + "}"
    reader = (
        f"read_csv({sql_literal(path)}, delim = {sql_literal(delimiter)}, columns = {columns}, {CSV_OPTIONS})"
    )
    irregular = " or ".join(f"{f} is null or contains({f}, {sql_literal(other_blank)})" for f in fields)
    return reader, f"({irregular})"


def load_fields(con: duckdb.DuckDBPyConnection, path: Path, fields: list[str], keep: list[str], table: str) -> int:
    """Load a whitespace-separated file (spaces or tabs) into temp table `table`: the `keep` fields, as text.

    Fast path: csv_source. Files that mix tabs and runs of spaces go through a regex split of each line
    instead. Blank lines are skipped. Returns the row count.
    """
    reader, irregular = csv_source(path, fields)
    clean = False
    try:
        con.execute(
            f"create or replace temp table {table} as select {', '.join(keep)}, {irregular} as is_irregular "
            f"from {reader}"
        )
        clean = con.execute(f"select count(*) from {table} where is_irregular").fetchone()[0] == 0
    except duckdb.Error:
        clean = False
    if not clean:
        parts = ", ".join(f"parts[{fields.index(f) + 1}] as {f}" for f in keep)
        con.execute(
            f"""
            create or replace temp table {table}_lines as
            select string_split_regex(trim(line), '[ \t\r]+') as parts
            from read_csv({sql_literal(path)}, delim = '\x1f', columns = {{'line': 'varchar'}}, {CSV_OPTIONS})
            where trim(coalesce(line, '')) <> ''
            """
        )
        if con.execute(f"select count(*) from {table}_lines where len(parts) <> {len(fields)}").fetchone()[0]:
            line = line_of(path, lambda p: len(p) != len(fields))
            raise InputError(f"{at(path, line)}: expected {len(fields)} fields ({' '.join(fields)})")
        con.execute(f"create or replace temp table {table} as select {parts} from {table}_lines")
        con.execute(f"drop table {table}_lines")
    count = con.execute(f"select count(*) from {table}").fetchone()[0]
    if count == 0:
        raise InputError(f"{path}: empty file")
    return count


def repeated_pair_hashes(rows: str) -> str:
    """SQL for the 64-bit hashes of (question_id, doc_id) that occur more than once in `rows` (a table or a
    subquery): one column to group on, not two strings. Normally none; a hash found here is a duplicate or,
    rarely, a collision, which only a comparison of the strings tells apart."""
    return f"select hash(question_id, doc_id) as pair_hash from {rows} group by pair_hash having count(*) > 1"


def check_unique(con: duckdb.DuckDBPyConnection, path: Path, table: str, what: str) -> None:
    """(question_id, doc_id) must be unique: trec_eval refuses duplicates too.

    Grouped on a 64-bit hash of the pair first (one column, not two strings: 2.0 s -> 1.4 s at 10M rows);
    only pairs whose hash repeats (normally none) are compared as strings, so a collision never decides.
    """
    duplicate = con.execute(
        f"""
        with repeated_hashes as ({repeated_pair_hashes(table)})
        select question_id, doc_id from {table}
        where hash(question_id, doc_id) in (select pair_hash from repeated_hashes)
        group by question_id, doc_id having count(*) > 1
        order by question_id, doc_id limit 1
        """
    ).fetchone()
    if duplicate:
        question_id, doc_id = duplicate
        seen: list[int] = []

        def second(parts: list[str]) -> bool:
            if parts[0] == question_id and parts[2] == doc_id:
                seen.append(1)
            return len(seen) == 2

        line = line_of(path, second)
        raise InputError(f"{at(path, line)}: duplicate {what} for question {question_id!r}, doc {doc_id!r}")


def parse_qrels(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """TREC qrels (qid iter docno rel) -> temp table qrels_text (question_id, doc_id, relevance), as text.
    Returns the row count."""
    return load_fields(con, path, QRELS_FIELDS, ["question_id", "doc_id", "relevance"], "qrels_text")


def check_qrels(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """qrels_text -> temp table qrels_in, checked: integer grades, one judgment per (question, doc)."""
    bad = con.execute(f"select question_id, doc_id, relevance from qrels_text where {SQL_BAD_GRADE} limit 1").fetchone()
    if bad:
        line = line_of(path, lambda p: len(p) == 4 and not INTEGER.match(p[3]))
        raise InputError(f"{at(path, line)}: relevance {bad[2]!r} is not an integer")
    check_unique(con, path, "qrels_text", "judgment")
    keep_judgments(con)


def keep_judgments(con: duckdb.DuckDBPyConnection) -> None:
    """Checked qrels_text -> temp table qrels_in, grades as integers: what raw_tables.replace_judgments reads."""
    con.execute(
        "create or replace temp table qrels_in as "
        "select question_id, doc_id, cast(relevance as integer) as relevance from qrels_text"
    )


def read_run(con: duckdb.DuckDBPyConnection, path: Path) -> str:
    """The careful read of a TREC run (qid Q0 docno rank score tag): temp table run_text, checked (six fields,
    finite scores, one line per (question, doc)), each error naming the line at fault. Returns the query of
    its rows as ranked_rows takes them."""
    load_fields(con, path, RUN_FIELDS, ["question_id", "doc_id", "score"], "run_text")
    bad = con.execute(f"select score from run_text where {SQL_BAD_SCORE} limit 1").fetchone()
    if bad:
        line = line_of(path, lambda p: len(p) == 6 and not (NUMBER.match(p[4]) and p[4].lower() not in {"nan"}))
        raise InputError(f"{at(path, line)}: score {bad[0]!r} is not a finite number")
    check_unique(con, path, "run_text", "document in run")
    return "select question_id, doc_id, cast(score as double) as score from run_text"


def one_pass_run(path: Path) -> str:
    """A clean run file as the rows ranked_rows takes (question_id, doc_id, score as double), read and checked in
    the same pass: a line the careful read would refuse or re-split (mixed blanks, a bad score) raises an
    error instead, and the caller falls back to the careful read, which names the line at fault."""
    reader, irregular = csv_source(path, RUN_FIELDS)
    return (
        f"select question_id, doc_id, cast(case when {irregular} or {SQL_BAD_SCORE} "
        f"then error('not a clean run line') else score end as double) as score from {reader}"
    )


def run_tag(path: Path) -> str:
    """The run's tag: the last field of its first non-blank line, the name of the system that produced it."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        return next(line for line in handle if line.strip()).split()[-1]


def ranked_rows(run_rows: str) -> str:
    """A run's rows (question_id, doc_id, score) ranked as trec_eval ranks them, as raw_tables.replace_run
    takes them: rank 1 first within each question."""
    return (
        f"select question_id, doc_id, cast(row_number() over ({TREC_ORDER}) as integer) as rank, score, "
        f"cast(null as varchar) as matched_terms from ({run_rows}) as run_rows"
    )


def has_repeated_pair(con: duckdb.DuckDBPyConnection, run_key: list[str]) -> bool:
    """Whether a (question, doc) hash occurs twice in one run of raw.rankings: a duplicate, or a collision
    that the careful read (check_unique) then tells apart by comparing the strings."""
    run = "(select question_id, doc_id from raw.rankings where collection_id = ? and run_id = ?) as run"
    return bool(con.execute(f"{repeated_pair_hashes(run)} limit 1", run_key).fetchone())


