"""Import TREC qrels and run files, or a BEIR folder, into the warehouse's raw schema.

    python scripts/import_trec.py --collection NAME --qrels FILE                  # judgments
    python scripts/import_trec.py --collection NAME --run FILE --run-id ID        # one more run
    python scripts/import_trec.py --collection NAME --beir DIR [--split test]     # docs, queries, qrels
    (--qrels/--beir and --run may be given together)

Files are read in bulk by DuckDB; ids stay text exactly as written ("7", "07" and "007" differ). A run is
ranked once, here, as trec_eval ranks it: score descending (as a 32-bit float), ties by docno descending
compared as strings; the file's rank column is ignored. A clean run file is read, checked and ranked in one
pass straight into raw.rankings; any other file (mixed blanks, a bad line) is rolled back and read again the
careful way, through a temp table, which names the line at fault. Judgments replace the collection's
judgments; a run replaces that run only. Everything is written in one transaction: on any error the database
is left exactly as it was, and one line on stderr names the file and line (or key) at fault (or, for a
database another process holds, that process). On a terminal a progress bar over the stages (parse, check,
rank, write) shows each stage's rows and rows/s on stderr; in a pipe or under CI, only the one summary line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

import duckdb
from tqdm import tqdm

from progress import progress
from warehouse import (
    SEEDED_COLLECTION,
    InputError,
    check_identifier,
    connect,
    database_error,
    database_path,
    transaction,
)

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


def memory_limit() -> str:
    """DuckDB's memory cap for the import (it spills to disk beyond it): $RETRIEVAL_MEMORY_LIMIT or 600MB."""
    return os.environ.get("RETRIEVAL_MEMORY_LIMIT", "600MB")


def sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


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
        f"read_csv({sql_string(str(path))}, delim = {sql_string(delimiter)}, columns = {columns}, {CSV_OPTIONS})"
    )
    irregular = " or ".join(f"{f} is null or contains({f}, {sql_string(other_blank)})" for f in fields)
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
            from read_csv({sql_string(str(path))}, delim = '\x1f', columns = {{'line': 'varchar'}}, {CSV_OPTIONS})
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


class Stages:
    """The import's stages (parse, check, rank, write) as a progress bar on a terminal: the postfix names the
    stage running, on how many rows, and the rows per second of the stage before it; at the end, the whole
    import's rows and rows per second. Silent in a pipe or under CI (see progress.progress)."""

    def __init__(self, names: list[str]) -> None:
        self.bar = progress(total=len(names), desc="import_trec.py", unit="stage")
        self.name: str | None = None
        self.rows: int | None = None
        self.started = self.first_started = time.perf_counter()
        self.last = ""  # "check: 10,000 rows at 1.2M rows/s"
        self.rows_read: dict[str, int] = {}

    def begin(self, name: str, rows: int | None = None) -> None:
        """End the current stage (if any) and start the next one, on `rows` rows when known. Beginning the
        stage already running goes on with it (the careful read of a run, after the one-pass read)."""
        if name == self.name:
            return
        self.end()
        self.name, self.rows, self.started = name, rows, time.perf_counter()
        running = name if rows is None else f"{name}: {rows:,} rows"
        self.bar.set_postfix_str(f"{running} | {self.last}" if self.last else running)

    def count(self, rows: int) -> None:
        """The rows the current stage read, once known: the judgments (parse) or the run (rank)."""
        self.rows = rows
        if self.name:
            self.rows_read[self.name] = rows

    def end(self) -> None:
        if self.name is None:
            return
        if self.rows is not None:
            self.last = f"{self.name}: {self.rows:,} rows at {per_second(self.rows, self.started)}"
        self.bar.update(1)
        self.name = None

    def __enter__(self) -> Stages:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if kind is None:
            self.end()
            total = sum(self.rows_read.values())
            self.bar.set_postfix_str(f"{total:,} rows at {per_second(total, self.first_started)}")
        else:
            self.bar.leave = False  # an error: clear the bar, the one-line message follows
        self.bar.close()


def per_second(rows: int, since: float) -> str:
    """'3.2M rows/s': rows over the seconds since `since`."""
    rate = rows / max(time.perf_counter() - since, 1e-9)
    return f"{tqdm.format_sizeof(rate, divisor=1000)} rows/s"


def parse_trec_qrels(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """TREC qrels (qid iter docno rel) -> temp table qrels_text, as text. Returns the row count."""
    return load_fields(con, path, QRELS_FIELDS, ["question_id", "doc_id", "relevance"], "qrels_text")


def check_trec_qrels(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """qrels_text -> qrels_in, checked: integer grades, one judgment per (question, doc)."""
    bad = con.execute(f"select question_id, doc_id, relevance from qrels_text where {SQL_BAD_GRADE} limit 1").fetchone()
    if bad:
        line = line_of(path, lambda p: len(p) == 4 and not INTEGER.match(p[3]))
        raise InputError(f"{at(path, line)}: relevance {bad[2]!r} is not an integer")
    check_unique(con, path, "qrels_text", "judgment")
    con.execute(
        "create or replace temp table qrels_in as "
        "select question_id, doc_id, cast(relevance as integer) as relevance from qrels_text"
    )


def parse_trec_run(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """TREC run (qid Q0 docno rank score tag) -> temp table run_text (question_id, doc_id, score), as text.
    Returns the row count."""
    return load_fields(con, path, RUN_FIELDS, ["question_id", "doc_id", "score"], "run_text")


def check_trec_run(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """run_text checked: finite scores, one line per (question, doc)."""
    bad = con.execute(f"select score from run_text where {SQL_BAD_SCORE} limit 1").fetchone()
    if bad:
        line = line_of(path, lambda p: len(p) == 6 and not (NUMBER.match(p[4]) and p[4].lower() not in {"nan"}))
        raise InputError(f"{at(path, line)}: score {bad[0]!r} is not a finite number")
    check_unique(con, path, "run_text", "document in run")


# the careful read's run (run_text, checked) as the rows write() ranks
CHECKED_RUN = "select question_id, doc_id, cast(score as double) as score from run_text"


def one_pass_run(path: Path) -> str:
    """A clean run file as the rows write() ranks (question_id, doc_id, score as double), read and checked in
    the same pass: a line the careful read would refuse or re-split (mixed blanks, a bad score) raises an
    error instead, and the caller falls back to the careful read, which names the line at fault."""
    reader, irregular = csv_source(path, RUN_FIELDS)
    return (
        f"select question_id, doc_id, cast(case when {irregular} or {SQL_BAD_SCORE} "
        f"then error('not a clean run line') else score end as double) as score from {reader}"
    )


class CarefulReadNeeded(Exception):
    """The one-pass read of a run met a line it does not report on (or a repeated (question, doc) hash)."""


def run_tag(path: Path) -> str:
    """The run's tag: the last field of its first non-blank line, the name of the system that produced it."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        return next(line for line in handle if line.strip()).split()[-1]


def has_repeated_pair(con: duckdb.DuckDBPyConnection, run_key: list[str]) -> bool:
    """Whether a (question, doc) hash occurs twice in one run of raw.rankings: a duplicate, or a collision
    that the careful read (check_unique) then tells apart by comparing the strings."""
    run = "(select question_id, doc_id from raw.rankings where collection_id = ? and run_id = ?) as run"
    return bool(con.execute(f"{repeated_pair_hashes(run)} limit 1", run_key).fetchone())


def beir_files(folder: Path, split: str) -> tuple[Path, Path, Path]:
    """A BEIR folder's corpus.jsonl, queries.jsonl and qrels/<split>.tsv."""
    return folder / "corpus.jsonl", folder / "queries.jsonl", folder / "qrels" / f"{split}.tsv"


BEIR_JSON = (
    ("documents_in", "{'_id': 'varchar', 'title': 'varchar', 'text': 'varchar'}"),
    ("questions_in", "{'_id': 'varchar', 'text': 'varchar'}"),
)


def parse_beir(con: duckdb.DuckDBPyConnection, folder: Path, split: str) -> int:
    """A BEIR folder -> temp tables documents_in, questions_in, qrels_text. Returns the rows read."""
    corpus, queries, qrels = beir_files(folder, split)
    for path in (corpus, queries, qrels):
        if not path.is_file():
            raise InputError(f"{path}: no such file (a BEIR folder has corpus.jsonl, queries.jsonl, qrels/{split}.tsv)")
    rows = 0
    for path, (table, columns) in zip((corpus, queries), BEIR_JSON, strict=True):
        try:
            con.execute(
                f"create or replace temp table {table} as select * from read_json({sql_string(str(path))}, "
                f"format = 'newline_delimited', columns = {columns})"
            )
        except duckdb.Error as exc:
            raise InputError(f"{path}: not valid JSON lines ({str(exc).splitlines()[0]})") from None
        count = con.execute(f"select count(*) from {table}").fetchone()[0]
        if count == 0:
            raise InputError(f"{path}: empty file")
        rows += count
    try:
        con.execute(
            f"create or replace temp table qrels_text as select * from read_csv({sql_string(str(qrels))}, "
            "delim = '\t', header = true, quote = '', escape = '', auto_detect = false, "
            "columns = {'question_id': 'varchar', 'doc_id': 'varchar', 'relevance': 'varchar'})"
        )
    except duckdb.Error as exc:
        raise InputError(f"{qrels}: expected 3 tab-separated columns ({str(exc).splitlines()[0]})") from None
    return rows + con.execute("select count(*) from qrels_text").fetchone()[0]


def check_beir(con: duckdb.DuckDBPyConnection, folder: Path, split: str) -> None:
    """The BEIR temp tables checked (one record per _id, integer grades, one judgment per pair) -> qrels_in."""
    corpus, queries, qrels = beir_files(folder, split)
    for path, (table, _) in zip((corpus, queries), BEIR_JSON, strict=True):
        problem = con.execute(
            f"select _id, count(*) from {table} group by _id having _id is null or count(*) > 1 limit 1"
        ).fetchone()
        if problem:
            key = problem[0]
            line = beir_line_of(path, key)
            raise InputError(f"{at(path, line)}: " + ("missing _id" if key is None else f"duplicate _id {key!r}"))
    bad = con.execute(
        f"select relevance from qrels_text where question_id is null or doc_id is null or {SQL_BAD_GRADE} limit 1"
    ).fetchone()
    if bad:
        raise InputError(f"{qrels}: score {bad[0]!r} is not an integer (or a column is empty)")
    check_unique(con, qrels, "qrels_text", "judgment")
    con.execute(
        "create or replace temp table qrels_in as "
        "select question_id, doc_id, cast(relevance as integer) as relevance from qrels_text"
    )


def beir_line_of(path: Path, key: str | None) -> int | None:
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


def write(con: duckdb.DuckDBPyConnection, collection: str, run_id: str | None, run_path: Path | None,
          judgments: str | None, stages: Stages | None = None, one_pass: bool = False) -> str:
    """Replace the collection's judgments (if loaded) and/or one run, in the current transaction.

    The run's rows (`one_pass`: read from the file by one_pass_run, CarefulReadNeeded on any line it does not
    take; else CHECKED_RUN, from the careful read) are ranked as they are inserted (stage "rank"), then
    everything else is written (stage "write"; the caller's commit belongs to it too).
    """
    key = [collection]
    summary: list[str] = []
    if (
        not judgments
        and collection != SEEDED_COLLECTION
        and not con.execute("select count(*) from raw.qrels where collection_id = ?", key).fetchone()[0]
    ):
        raise InputError(f"collection {collection!r} has no judgments yet: import --qrels (or --beir) first")
    run_summary = None
    if run_id and run_path:
        run_key = [collection, run_id]
        if stages:
            stages.begin("rank")
        con.execute("delete from raw.rankings where collection_id = ? and run_id = ?", run_key)
        con.execute("delete from raw.runs where collection_id = ? and run_id = ?", run_key)
        insert = f"""
            insert into raw.rankings (collection_id, run_id, question_id, doc_id, rank, score)
            select ?, ?, question_id, doc_id, cast(row_number() over ({TREC_ORDER}) as integer), score
            from ({one_pass_run(run_path) if one_pass else CHECKED_RUN}) as run_rows
            """
        try:
            n_rows = con.execute(insert, run_key).fetchone()[0]
        except duckdb.Error as exc:
            if not one_pass:
                raise
            raise CarefulReadNeeded(str(exc)) from exc
        if one_pass and (n_rows == 0 or has_repeated_pair(con, run_key)):
            raise CarefulReadNeeded("no rows, or a repeated (question, doc) hash")
        if stages:
            stages.count(n_rows)
        tag = run_tag(run_path)
        parameters = json.dumps({"format": "trec", "source": run_path.name, "tag": tag}, sort_keys=True)
        con.execute(
            "insert into raw.runs values (?, ?, ?, ?, cast(now() at time zone 'UTC' as timestamp))",
            [*run_key, tag, parameters],
        )
        run_summary = f"run {run_id}: {n_rows} ranked docs"
    if stages:
        stages.begin("write")
    if judgments:
        for table in ("qrels", "questions", "documents"):
            con.execute(f"delete from raw.{table} where collection_id = ?", key)
        con.execute("insert into raw.qrels select ?, question_id, doc_id, relevance from qrels_in", key)
        n_qrels, n_questions = con.execute("select count(*), count(distinct question_id) from qrels_in").fetchone()
        summary.append(f"{n_qrels} judgments for {n_questions} questions")
        if judgments == "beir":
            # only the questions judged in this split: the others are not part of the evaluation
            con.execute(
                "insert into raw.questions select ?, _id, text from questions_in "
                "where _id in (select question_id from qrels_in)",
                key,
            )
            con.execute("insert into raw.documents select ?, _id, title, text from documents_in", key)
            summary.append(f"{con.execute('select count(*) from documents_in').fetchone()[0]} documents")
    if run_summary:
        summary.append(run_summary)
    return "; ".join(summary)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--collection", required=True, help="collection name (a plain identifier)")
    parser.add_argument("--qrels", type=Path, help="TREC qrels file: qid iter docno rel")
    parser.add_argument("--beir", type=Path, help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv")
    parser.add_argument("--split", default="test", help="BEIR qrels split (default: test)")
    parser.add_argument("--run", type=Path, help="TREC run file: qid Q0 docno rank score tag")
    parser.add_argument("--run-id", help="run id for --run (a plain identifier)")
    parser.add_argument("--db", help="DuckDB file (default: $RETRIEVAL_DB, else retrieval.duckdb in the repo root)")
    args = parser.parse_args(argv)
    try:
        check_identifier("collection", args.collection)
        if not (args.qrels or args.beir or args.run):
            raise InputError("nothing to import: give --qrels, --beir and/or --run")
        if args.qrels and args.beir:
            raise InputError("give --qrels or --beir, not both: each replaces the collection's judgments")
        if (args.qrels or args.beir) and args.collection == SEEDED_COLLECTION:
            raise InputError(f"collection {SEEDED_COLLECTION!r} is the lesson's seeds: its judgments live in seeds/")
        if args.run_id is not None:
            check_identifier("run id", args.run_id)
        if bool(args.run) != (args.run_id is not None):
            raise InputError("--run and --run-id go together")
        stage_names = ["parse", "check", *(["rank"] if args.run else []), "write"]
        with (
            connect(database_path(args.db), config={"memory_limit": memory_limit()}) as con,
            Stages(stage_names) as stages,
        ):
            # Judgments are parsed and checked into temp tables first (a failed read may abort a transaction).
            # A run is read, checked and ranked in one pass inside the transaction; if that pass meets a
            # line it does not take, the transaction rolls back and the careful read (temp table, checks
            # that name the line at fault) takes over.
            stages.begin("parse")
            n_rows = 0
            if args.qrels:
                n_rows = parse_trec_qrels(con, args.qrels)
            elif args.beir:
                n_rows = parse_beir(con, args.beir, args.split)
            stages.count(n_rows)
            stages.begin("check", n_rows or None)
            judgments = None
            if args.qrels:
                check_trec_qrels(con, args.qrels)
                judgments = "trec"
            elif args.beir:
                check_beir(con, args.beir, args.split)
                judgments = "beir"
            try:
                with transaction(con):
                    summary = write(con, args.collection, args.run_id, args.run, judgments, stages, one_pass=True)
            except CarefulReadNeeded:
                parse_trec_run(con, args.run)
                check_trec_run(con, args.run)
                with transaction(con):
                    summary = write(con, args.collection, args.run_id, args.run, judgments, stages)
    except InputError as exc:
        print(f"import_trec.py: error: {exc}", file=sys.stderr)
        return 2
    except duckdb.IOException as exc:
        print(database_error("import_trec.py", database_path(args.db), exc), file=sys.stderr)
        return 2
    print(f"import_trec.py: collection {args.collection}: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
