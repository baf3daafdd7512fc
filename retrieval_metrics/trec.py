"""TREC files: a qrels file (`qid iter docno rel`) and a run file (`qid Q0 docno rank score tag`), read in bulk
by DuckDB into temp tables and checked, with errors that name the file and line at fault.

Ids stay text exactly as written ("7", "07" and "007" differ). A run is ranked by its collection's tie rule
(tie_rules), by default as trec_eval ranks it: score descending (as a 32-bit float, or under trec_eval_version
10 as the double read), ties by docno descending compared as strings; the file's rank column is ignored. A
clean run file can be read, checked and ranked in one pass (one_pass_run); any other file goes through the
careful read (read_run), which names the line at fault.
Both run on every thread DuckDB has, except the one pass over a file whose first lines carry text after the 6th
field (see one_pass_run).

What trec_eval takes, we take; what it refuses, we refuse. A run line may carry text after its 6th field: it
is ignored, and the lines that did are counted (extra_text_lines); a qrels line may not. A score is read as
trec_eval reads it (atof: a double, kept as read); trec_eval 9 ranks it as a 32-bit float, where one beyond the
float's range (1e39, 1e400) is infinity, as is "inf" or "-Infinity" spelled out. Where trec_eval would
silently read something other than what is written, we refuse instead: a score that is not a number as a whole ("high", "1.5x", "0x10": atof reads 0, 1.5, 16) or
is NaN (trec_eval's sort has no order for it), and a grade that is not a plain 32-bit integer ("1.5", "1e2":
atol reads 1). A negative grade is kept as written (to trec_eval: in the pool, not judged).

A line whose first non-blank character is `#` is a comment, skipped as trec_eval 10.0 skips it; blank lines are
skipped too. An error names a line by its number in the file, comments and blank lines counted. ir_metadata
(ir-metadata.org) writes a run's description as such a block at the top of the file: `# ir_metadata.start`,
the YAML, each line prefixed with `# `, then `# ir_metadata.end`. run_metadata reads it (the lines before the
first line that is neither blank nor a comment, in Python: never the whole file) as the run's metadata.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import duckdb

from retrieval_metrics.raw_tables import metadata_json
from retrieval_metrics.tie_rules import TREC_EVAL, order_by
from retrieval_metrics.warehouse import InputError, sql_literal

RUN_FIELDS = ["question_id", "q0", "doc_id", "file_rank", "score", "tag"]
QRELS_FIELDS = ["question_id", "iteration", "doc_id", "relevance"]
NUMBER = re.compile(r"^[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)(e[+-]?[0-9]+)?|inf|infinity)$", re.IGNORECASE)
INTEGER = re.compile(r"^[+-]?[0-9]+$")
# SQL twins of NUMBER and of is_grade: DuckDB's casts alone also accept '1_000', '+-1' and 'nan', and as an
# integer '3.0', '1e2' and '0x1'
# The score as a double, read once per line (SCORE_VALUE, a column the checks and TREC_SCORE read): null if
# DuckDB cannot read it
SCORE_VALUE = "try_cast(score as double)"
SQL_BAD_SCORE = "(score_value is null or isnan(score_value) or contains(score, '_') or starts_with(score, '+-'))"
SQL_BAD_GRADE = "(not regexp_full_match(relevance, '[+-]?[0-9]+') or try_cast(relevance as integer) is null)"
BLANKS = " \t\r"  # what separates fields, in the careful read
COMMENT = "#"  # a line whose first non-blank character is this is a comment
# The condition that keeps a line of the CSV reader's: one whose first field does not start a comment. (DuckDB's
# own `comment` option is no use: it also cuts a line at a '#' inside it, as in the chunk id doc#2.) A comment
# with blanks before its '#' is an irregular line to this reader (an empty first field, or a blank inside it):
# the careful read takes the file.
NOT_A_COMMENT = f"not coalesce(starts_with(question_id, {COMMENT!r}), false)"
CSV_OPTIONS = "header = false, quote = '', escape = '', auto_detect = false"
# The reader of a run (csv_source with trailing_text): a line may have more fields than the columns, the
# ones past the last column dropped; a line with fewer is padded with nulls; an empty field is '', not null
TRAILING_TEXT_OPTIONS = "strict_mode = false, null_padding = true, nullstr = '\x1f'"
# A checked score as trec_eval 10.0 holds it, and as it is stored: atof's double (1e39 stays 1e39, 1e400 is
# infinity). trec_eval 9.x and pytrec_eval rank it as a 32-bit float, where every double beyond a float's range
# is infinity and ties: the collection's trec_eval_version chooses (tie_rules.float32)
TREC_SCORE = "score_value"
# trec_eval 9's order within a question: score descending as a 32-bit float, then docno descending (tie_rules)
TREC_ORDER = f"partition by question_id order by {order_by(TREC_EVAL)}"
# The temp sequence that counts a run's lines with text after the 6th field. Counting as the rows are read
# (nextval) makes DuckDB read on one thread: 1.4x the one pass's time at 10M and 100M lines on 2 cores
EXTRA_TEXT_LINES = "run_extra_text_lines"
# How many of a run's first lines (neither blank nor comments) one_pass_run looks at for text after the 6th field
EXTRA_TEXT_SAMPLE = 1000


def fields_of(line: str) -> list[str]:
    """A line's fields as the careful read splits them (on BLANKS only: not on every blank str.split knows)."""
    return [part for part in re.split(f"[{BLANKS}\n]+", line) if part]


def is_content(parts: list[str]) -> bool:
    """Whether a line, as its fields (fields_of), is neither blank nor a comment."""
    return bool(parts) and not parts[0].startswith(COMMENT)


def first_match(path: Path, matches: Callable[[list[str]], bool]) -> tuple[int, list[str]] | None:
    """The 1-based number (in the file, comments and blank lines counted) and the fields (fields_of) of the
    first line, neither blank nor a comment, whose fields satisfy `matches`."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            parts = fields_of(line)
            if is_content(parts) and matches(parts):
                return number, parts
    return None


def line_of(path: Path, matches: Callable[[list[str]], bool]) -> int | None:
    """1-based number of the first line, neither blank nor a comment, whose fields (fields_of) satisfy
    `matches`."""
    found = first_match(path, matches)
    return found[0] if found else None


def check_file(path: Path) -> None:
    """InputError unless `path` is a file: missing, or a directory."""
    if path.is_dir():
        raise InputError(f"{path} is a directory, not a file")
    if not path.is_file():
        raise InputError(f"{path}: no such file")


def at(path: Path, line: int | None) -> str:
    return f"{path}:{line}" if line else str(path)


def unreadable(path: Path, error: duckdb.Error) -> InputError:
    """The error for a file that DuckDB cannot read line by line: it names the first line that is not UTF-8 text,
    else passes on DuckDB's first line."""
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                return InputError(f"{path}:{number}: not UTF-8 text")
    return InputError(f"{path}: {str(error).splitlines()[0]}")


def is_grade(text: str) -> bool:
    """A grade as we take it: a plain integer that fits 32 bits."""
    return bool(INTEGER.match(text)) and -(2**31) <= int(text) < 2**31


def holds(path: Path, byte: bytes) -> tuple[bool, bool]:
    """Whether the file holds this byte anywhere, and whether a line of it starts with COMMENT: one scan in 16 MiB
    blocks (about 1 s for 3.4 GB on disk cache), to its end unless both are found. Line starts are looked at
    only in a block that holds COMMENT at all, which most runs' blocks do not."""
    comment = COMMENT.encode()
    has_byte = has_comment = False
    before = b"\n"  # the byte before the block: the file's start is a line's start
    with path.open("rb") as handle:
        while not (has_byte and has_comment) and (block := handle.read(1 << 24)):
            has_byte = has_byte or byte in block
            if not has_comment and comment in block:
                window = before + block
                has_comment = b"\n" + comment in window or b"\r" + comment in window
            before = block[-1:]
    return has_byte, has_comment


def csv_source(path: Path, fields: list[str], trailing_text: bool = False) -> tuple[str, str]:
    """DuckDB's CSV reader over a whitespace-separated file, every field as text, with the file's one delimiter
    (that of its first line neither blank nor a comment), and the condition true on a line this reader gets
    wrong: an empty field (a run of delimiters) or the other blank inside a field (mixed blanks). InputError
    for a missing or empty file (blank lines and comments only). The other blank is looked for in each field
    only if the file holds it at all: the six `contains` cost a run's one pass more than the scan of the file
    that spares them (1.2 s against 0.1 s of CPU at 10M lines). Likewise comment lines are left out
    (NOT_A_COMMENT) only if a line starts with COMMENT: the filter costs the one pass 10-15%.

    With `trailing_text` (a run, whose lines may carry text after the last field), one more column, `rest`:
    null on a line with no more fields, else the next one (any after it dropped). An empty `rest` (a blank
    after the last field: trailing, or a run of blanks before more text) is a line this reader gets wrong.
    """
    check_file(path)
    with path.open(encoding="utf-8", errors="replace") as handle:
        first = next((line for line in handle if is_content(fields_of(line))), None)
    if first is None:
        raise InputError(f"{path}: empty file")
    delimiter, other_blank = ("\t", " ") if "\t" in first else (" ", "\t")
    columns = "{" + ", ".join(f"'{f}': 'varchar'" for f in [*fields, *(["rest"] if trailing_text else [])]) + "}"
    mode = TRAILING_TEXT_OPTIONS if trailing_text else "strict_mode = true"
    delim = sql_literal(delimiter)
    reader = f"read_csv({sql_literal(path)}, delim = {delim}, columns = {columns}, {CSV_OPTIONS}, {mode})"
    has_other_blank, has_comments = holds(path, other_blank.encode())
    if has_comments:
        reader = f"(select * from {reader} where {NOT_A_COMMENT})"
    other = sql_literal(other_blank) if has_other_blank else None
    irregular = [f"{f} is null or {f} = ''" + (f" or contains({f}, {other})" if other else "") for f in fields]
    if trailing_text:
        irregular.append("rest = ''")
    return reader, f"({' or '.join(irregular)})"


def load_fields(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    fields: list[str],
    keep: list[str],
    table: str,
    trailing_text: bool = False,
) -> int:
    """Load a whitespace-separated file (spaces or tabs) into temp table `table`: the `keep` fields, as text.
    With `trailing_text` (a run), a line may carry text after the last field, and column `extra_text` says
    whether it did.

    Fast path: csv_source. Files that mix tabs and runs of spaces go through a regex split of each line
    instead (each line read whole: its delimiter is the line break, which no line holds; not strict, so that
    LF and CRLF line ends may mix). Blank lines and comments are skipped. Returns the row count.
    """
    reader, irregular = csv_source(path, fields, trailing_text)
    clean = False
    try:
        extra_text = ", rest is not null as extra_text" if trailing_text else ""
        con.execute(
            f"create or replace temp table {table} as select {', '.join(keep)}{extra_text}, "
            f"{irregular} as is_irregular from {reader}"
        )
        clean = con.execute(f"select count(*) from {table} where is_irregular").fetchone()[0] == 0
    except duckdb.Error:
        clean = False
    if not clean:
        n = len(fields)
        parts = ", ".join(f"parts[{fields.index(f) + 1}] as {f}" for f in keep)
        try:
            con.execute(
                f"""
                create or replace temp table {table}_lines as
                select string_split_regex(trim(line, {sql_literal(BLANKS)}), '[{BLANKS}]+') as parts
                from read_csv({sql_literal(path)}, delim = '\n', columns = {{'line': 'varchar'}}, {CSV_OPTIONS},
                    strict_mode = false)
                where trim(coalesce(line, ''), {sql_literal(BLANKS)}) <> ''
                    and not starts_with(trim(line, {sql_literal(BLANKS)}), {sql_literal(COMMENT)})
                """
            )
        except duckdb.Error as exc:
            raise unreadable(path, exc) from None
        too_few = f"len(parts) < {n}" if trailing_text else f"len(parts) <> {n}"
        if con.execute(f"select count(*) from {table}_lines where {too_few}").fetchone()[0]:
            line = line_of(path, lambda p: len(p) < n or (len(p) > n and not trailing_text))
            raise InputError(f"{at(path, line)}: expected {n} fields ({' '.join(fields)})")
        extra_text = f", len(parts) > {n} as extra_text" if trailing_text else ""
        con.execute(f"create or replace temp table {table} as select {parts}{extra_text} from {table}_lines")
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
    """qrels_text -> temp table qrels_in, checked: 32-bit integer grades, one judgment per (question, doc)."""
    bad = con.execute(f"select relevance from qrels_text where {SQL_BAD_GRADE} limit 1").fetchone()
    if bad:
        found = first_match(path, lambda p: len(p) == 4 and not is_grade(p[3]))
        line, grade = (found[0], found[1][3]) if found else (None, bad[0])
        what = "is not a 32-bit integer" if INTEGER.match(grade) else "is not an integer"
        raise InputError(f"{at(path, line)}: relevance {grade!r} {what}")
    check_unique(con, path, "qrels_text", "judgment")
    keep_judgments(con)


def keep_judgments(con: duckdb.DuckDBPyConnection) -> None:
    """Checked qrels_text -> temp table qrels_in, grades as integers: what raw_tables.replace_judgments reads."""
    con.execute(
        "create or replace temp table qrels_in as "
        "select question_id, doc_id, cast(relevance as integer) as relevance from qrels_text"
    )


def count_extra_text(con: duckdb.DuckDBPyConnection, lines: int = 0) -> None:
    """Start the count of a run's lines with text after the 6th field at `lines`: the rows of one_pass_run may
    count more as they are read, and extra_text_lines tells the count."""
    con.execute(f"create or replace temp sequence {EXTRA_TEXT_LINES}" + (f" start with {lines}" if lines else ""))
    if lines:
        con.execute(f"select nextval('{EXTRA_TEXT_LINES}')")  # its last value: `lines`


def score_counting_extra_text(has_extra_text: str) -> str:
    """The branches of a CASE giving a checked line's score (TREC_SCORE) that also count the lines where
    `has_extra_text` holds. CASE tries its branches in order, each on the lines no branch before it took, so
    nextval runs once on each such line and on no other line (an AND could run it first: DuckDB may reorder
    an AND's terms)."""
    return f"when not ({has_extra_text}) then {TREC_SCORE} when nextval('{EXTRA_TEXT_LINES}') > 0 then {TREC_SCORE}"


def extra_text_lines(con: duckdb.DuckDBPyConnection) -> int:
    """How many lines of the run just written carried text after the 6th field (see count_extra_text)."""
    row = con.execute(
        "select last_value from duckdb_sequences() where temporary and sequence_name = ?", [EXTRA_TEXT_LINES]
    ).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def with_score_value(rows: str) -> str:
    """The rows of a table or query with one more column, score_value (SCORE_VALUE), that SQL_BAD_SCORE and
    TREC_SCORE read: the score is read as a number once per line (four times otherwise)."""
    return f"(select *, {SCORE_VALUE} as score_value from {rows}) as run_lines"


def read_run(con: duckdb.DuckDBPyConnection, path: Path) -> str:
    """The careful read of a TREC run (qid Q0 docno rank score tag, then any text): temp table run_text,
    checked (six fields at least, numeric scores, one line per (question, doc)), each error naming the line at
    fault, and its lines with text after the 6th field counted (extra_text_lines). Returns the query of its
    rows as ranked_rows takes them."""
    load_fields(con, path, RUN_FIELDS, ["question_id", "doc_id", "score"], "run_text", trailing_text=True)
    bad = con.execute(f"select score from {with_score_value('run_text')} where {SQL_BAD_SCORE} limit 1").fetchone()
    if bad:
        found = first_match(path, lambda p: len(p) >= 6 and not NUMBER.match(p[4]))
        line, score = (found[0], found[1][4]) if found else (None, bad[0])
        raise InputError(f"{at(path, line)}: score {score!r} is not a number")
    check_unique(con, path, "run_text", "document in run")
    count_extra_text(con, con.execute("select count(*) from run_text where extra_text").fetchone()[0])
    return f"select question_id, doc_id, {TREC_SCORE} as score from {with_score_value('run_text')}"


def text_after_the_tag_early(path: Path) -> bool:
    """Whether one of the file's first EXTRA_TEXT_SAMPLE lines (neither blank nor comments) has text after its
    6th field."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        lines = (fields for fields in map(fields_of, handle) if is_content(fields))
        return any(len(fields) > 6 for _, fields in zip(range(EXTRA_TEXT_SAMPLE), lines, strict=False))


def one_pass_run(con: duckdb.DuckDBPyConnection, path: Path) -> str:
    """A clean run file as the rows ranked_rows takes (question_id, doc_id, score as TREC_SCORE), read and
    checked in the same pass: a line the careful read would refuse or re-split (mixed blanks, a blank after the
    last field, a bad score) raises an error instead, and the caller falls back to the careful read, which
    names the line at fault.

    A line with text after the 6th field is counted in the same pass (extra_text_lines) if one of the file's
    first lines has some (text_after_the_tag_early); else it raises an error too, and the careful read counts
    them. Counting as the rows are read takes a sequence, and DuckDB reads on one thread a query that calls
    nextval: a run that (as most do) has no such text is read on every thread."""
    reader, irregular = csv_source(path, RUN_FIELDS, trailing_text=True)
    count_extra_text(con)
    if text_after_the_tag_early(path):
        score = f"case when {irregular} or {SQL_BAD_SCORE} then error('not a clean run line') "
        score += f"{score_counting_extra_text('rest is not null')} end"
    else:
        score = f"case when {irregular} or {SQL_BAD_SCORE} or rest is not null then error('not a clean run line') "
        score += f"else {TREC_SCORE} end"
    return f"select question_id, doc_id, {score} as score from {with_score_value(reader)}"


def run_tag(path: Path) -> str:
    """The run's tag: the 6th field of its first line (neither blank nor a comment), the name of the system that
    produced it."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        return next(fields for fields in map(fields_of, handle) if is_content(fields))[:6][-1]


def swapped_columns(con: duckdb.DuckDBPyConnection, path: Path, sample: int = EXTRA_TEXT_SAMPLE) -> str | None:
    """A hint, or None, on a run file whose rank and score columns look swapped, from its first `sample` lines
    (neither blank nor comments; the columns of a file are swapped throughout, if at all): a rank field that is not
    a whole number, or scores that grow down each question's lines and never fall (a swapped file's "scores" are
    its ranks 1, 2, 3 ...; a file of distances reads so too). One aggregate over the lines DuckDB reads up to the
    sample's end, whatever the file's size: the import takes the file as trec_eval does all the same."""
    blanks = sql_literal(BLANKS)
    found = con.execute(
        f"""
        with lines as (
            select string_split_regex(trim(line, {blanks}), '[{BLANKS}]+') as parts, row_number() over () as line
            from (
                select line from read_csv({sql_literal(path)}, delim = '\n', columns = {{'line': 'varchar'}},
                    {CSV_OPTIONS}, strict_mode = false)
                where trim(coalesce(line, ''), {blanks}) <> '' and not starts_with(trim(line, {blanks}), {COMMENT!r})
                limit {int(sample)}
            )
        ),
        fields as (
            select parts[1] as question_id, parts[4] as file_rank, try_cast(parts[5] as double) as score, line
            from lines where len(parts) >= 6
        ),
        steps as (
            select file_rank, line, score - lag(score) over (partition by question_id order by line) as step
            from fields
        )
        select
            arg_min(file_rank, line) filter (where not regexp_full_match(file_rank, '[+-]?[0-9]+')),
            count(*) filter (where step > 0),
            count(*) filter (where step < 0)
        from steps
        """
    ).fetchone()
    fraction, rising, falling = found if found else (None, 0, 0)
    reasons = [f"the rank field (4th) is not a whole number ({fraction!r})"] if fraction is not None else []
    if rising and not falling:
        reasons.append("the scores (5th field) grow down each question's lines")
    if not reasons:
        return None
    return (f"{' and '.join(reasons)}: are the rank and score columns swapped? Imported as trec_eval reads it "
            "(the 5th field is the score, the highest ranked first)")  # fmt: skip


METADATA_START = "ir_metadata.start"  # the lines that open and close an ir_metadata block, after their `#`
METADATA_END = "ir_metadata.end"


def comment_text(line: str) -> str | None:
    """A comment line's text after its `#` and the one blank that follows it (ir_metadata's `# ` prefix; the
    YAML's own indentation is kept), line break dropped; None for a line that is not a comment."""
    stripped = line.lstrip(BLANKS)
    if not stripped.startswith(COMMENT):
        return None
    text = stripped[len(COMMENT) :].rstrip("\r\n")
    return text[1:] if text[:1] in (" ", "\t") else text


def run_metadata(path: Path) -> dict[str, object] | None:
    """The ir_metadata block among the comment lines at the top of a run (those before its first line that is
    neither blank nor a comment), as a mapping; None if there is none. Read in Python line by line, up to that
    first line only. InputError, naming the file and line, for a block with no end line before the run's lines
    start, that is not valid YAML, that is not a mapping (key: value lines), or that JSON cannot hold."""
    import yaml  # PyYAML, which dbt brings

    start: int | None = None  # the line that opens the block
    block: list[str] = []
    closed = False
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            text = comment_text(line)
            if text is None:
                if line.strip(BLANKS + "\n"):
                    break  # the run's first line: the comments at the top are over
                text = ""  # a blank line
            if start is None:
                start = number if text.strip() == METADATA_START else None
            elif text.strip() == METADATA_END:
                closed = True
                break
            else:
                block.append(text)
    if start is None:
        return None
    if not closed:
        raise InputError(f"{path}:{start}: ir_metadata block has no `# {METADATA_END}` line before the run's lines")
    try:
        metadata = yaml.safe_load("\n".join(block))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line_at = start + 1 + mark.line if mark is not None else start
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{path}:{line_at}: ir_metadata block is not valid YAML: {problem}") from None
    if not isinstance(metadata, dict):
        kinds = {"list": "a list", "str": "a string", "int": "a number", "float": "a number", "bool": "a boolean"}
        what = "empty" if metadata is None else kinds.get(type(metadata).__name__, type(metadata).__name__)
        raise InputError(f"{path}:{start}: ir_metadata block is {what}, not a mapping of `key: value` lines")
    try:
        metadata_json(metadata)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{path}:{start}: ir_metadata block cannot be stored as JSON: {exc}") from None
    return metadata


def ranked_rows(run_rows: str) -> str:
    """A run's rows (question_id, doc_id, score) ranked as trec_eval ranks them, as raw_tables.replace_run
    takes them: rank 1 first within each question. (The import ranks by the collection's tie rule:
    tie_rules.ranked_rows, which is this for trec_eval's.)"""
    return (
        f"select question_id, doc_id, cast(row_number() over ({TREC_ORDER}) as integer) as rank, score, "
        f"cast(null as varchar) as matched_terms from ({run_rows}) as run_rows"
    )


def has_repeated_pair(con: duckdb.DuckDBPyConnection, run_key: list[str]) -> bool:
    """Whether a (question, doc) hash occurs twice in one run of raw.rankings: a duplicate, or a collision
    that the careful read (check_unique) then tells apart by comparing the strings."""
    run = "(select question_id, doc_id from raw.rankings where collection_id = ? and run_id = ?) as run"
    return bool(con.execute(f"{repeated_pair_hashes(run)} limit 1", run_key).fetchone())
