"""Judgments imported as versions of a collection's qrels: `retrieval-metrics import --collection C --judgments FILE
[--judge NAME]`.

A label file (a labelling tool's CSV or JSON Lines with question_id, doc_id, grade and optionally judge and note,
or TREC qrels) becomes the collection's next qrels version: its rows are appended to raw.judgments under that
version number and the version is logged in raw.judgment_versions (when, who, which file, how many judgments
were new or changed a grade). Nothing is overwritten: a changed grade is a new version of that judgment, and the
setting qrels_version picks the version the measures use (int_qrels_unioned; docs/judging.md).

A bad file is refused whole, in one line naming the file and line: a question or document the collection does not
have, a grade that is not an integer, a (question, doc) pair twice, a missing column. Label files are a few
thousand rows: they are read and checked in Python, line by line, which names the line at fault exactly.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import duckdb

from retrieval_metrics.raw_tables import check_judged
from retrieval_metrics.warehouse import SEEDED_COLLECTION, InputError, check_identifier, connect, transaction

GRADE = re.compile(r"^-?[0-9]+$")
COLUMNS = ("question_id", "doc_id", "grade")  # required; judge and note are optional
HUMAN = "human"  # judge_kind of a label file's judgments: int_qrels_unioned puts them above any other kind


@dataclass(frozen=True)
class Judgment:
    line: int
    question_id: str
    doc_id: str
    grade: int
    judge: str
    note: str | None


def read_label_file(path: Path, judge: str) -> list[Judgment]:
    """The file's judgments: CSV (.csv, a header row), JSON Lines (.jsonl, .ndjson) or TREC qrels (any other name:
    `qid iter docno grade`). `judge` is the judge of the rows that name none."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    suffix = path.suffix.lower()
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            if suffix == ".csv":
                rows = csv_rows(path, handle)
            elif suffix in (".jsonl", ".ndjson"):
                rows = json_rows(path, handle)
            else:
                rows = qrels_rows(path, handle)
            judgments = [judgment(path, line, row, judge) for line, row in rows]
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if not judgments:
        raise InputError(f"{path}: no judgments in it")
    seen: dict[tuple[str, str], int] = {}
    for item in judgments:
        first = seen.setdefault((item.question_id, item.doc_id), item.line)
        if first != item.line:
            raise InputError(f"{path} lines {first} and {item.line}: question {item.question_id!r}, doc "
                             f"{item.doc_id!r} judged twice in one file")  # fmt: skip
    return judgments


def csv_rows(path: Path, handle: object) -> list[tuple[int, dict[str, object]]]:
    reader = csv.DictReader(handle)  # type: ignore[arg-type]
    missing = [column for column in COLUMNS if column not in (reader.fieldnames or [])]
    if missing:
        raise InputError(f"{path} line 1: no column {', '.join(missing)} in the header "
                         f"(it needs {', '.join(COLUMNS)}; judge and note are optional)")  # fmt: skip
    rows = []
    for row in reader:
        if None in row:
            raise InputError(f"{path} line {reader.line_num}: more fields than the header has")
        rows.append((reader.line_num, dict(row)))
    return rows


def json_rows(path: Path, handle: object) -> list[tuple[int, dict[str, object]]]:
    rows = []
    for number, text in enumerate(handle, start=1):  # type: ignore[call-overload]
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path} line {number}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise InputError(f"{path} line {number}: not a JSON object")
        missing = [column for column in COLUMNS if column not in row]
        if missing:
            raise InputError(f"{path} line {number}: no {', '.join(missing)}")
        rows.append((number, row))
    return rows


def qrels_rows(path: Path, handle: object) -> list[tuple[int, dict[str, object]]]:
    rows = []
    for number, text in enumerate(handle, start=1):  # type: ignore[call-overload]
        fields = text.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise InputError(f"{path} line {number}: {len(fields)} fields, not the 4 of a qrels line "
                             "(qid iter docno grade)")  # fmt: skip
        rows.append((number, {"question_id": fields[0], "doc_id": fields[2], "grade": fields[3]}))
    return rows


def judgment(path: Path, line: int, row: dict[str, object], judge: str) -> Judgment:
    where = f"{path} line {line}"
    ids = []
    for column in ("question_id", "doc_id"):
        value = row[column]
        if not isinstance(value, str | int) or isinstance(value, bool) or not str(value).strip():
            raise InputError(f"{where}: {column} {value!r} is not an id")
        ids.append(str(value).strip())
    grade = row["grade"]
    integral = isinstance(grade, int) or (isinstance(grade, str) and GRADE.match(grade.strip()) is not None)
    if isinstance(grade, bool) or not integral:
        raise InputError(f"{where}: grade {grade!r} is not an integer")
    if not -(2**31) <= int(str(grade).strip()) < 2**31:
        raise InputError(f"{where}: grade {grade} is out of range")
    named = row.get("judge")
    if named is not None and (not isinstance(named, str) or not named.strip()):
        raise InputError(f"{where}: judge {named!r} is not a name")
    note = row.get("note")
    return Judgment(line, ids[0], ids[1], int(str(grade).strip()), str(named).strip() if named else judge,
                    None if note in (None, "") else str(note))  # fmt: skip


def import_judgments(database: Path, collection_id: str, path: Path, judge: str) -> str:
    """Append the file's judgments as the collection's next qrels version, in one transaction; one line saying
    which version and what it changed. InputError, and nothing written, for a bad file or collection."""
    check_identifier("collection", collection_id)
    if collection_id == SEEDED_COLLECTION:
        raise InputError(f"collection {SEEDED_COLLECTION!r} is the lesson's seeds: its judgments live in seeds/")
    if not judge.strip():
        raise InputError("--judge: give the judge's name (a person or a team)")
    judgments = read_label_file(path, judge.strip())
    if not database.exists():
        raise InputError(f"{database} does not exist: import the collection's qrels first")
    with connect(database) as con, transaction(con):
        check_judged(con, collection_id)
        check_known(con, collection_id, path, judgments)
        (version,) = con.execute("select coalesce(max(qrels_version), 0) + 1 from raw.judgments "
                                 "where collection_id = ?", [collection_id]).fetchone()  # fmt: skip
        new, changed = changes(con, collection_id, judgments)
        con.execute(
            "insert into raw.judgments (collection_id, qrels_version, question_id, doc_id, grade, judge, judge_kind, "
            "note) select ?, ?, unnest(?::varchar[]), unnest(?::varchar[]), unnest(?::integer[]), "
            "unnest(?::varchar[]), ?, unnest(?::varchar[])",
            [collection_id, version, [j.question_id for j in judgments], [j.doc_id for j in judgments],
             [j.grade for j in judgments], [j.judge for j in judgments], HUMAN, [j.note for j in judgments]],
        )  # fmt: skip
        con.execute(
            "insert into raw.judgment_versions (collection_id, qrels_version, created_at, judge, judge_kind, source, "
            "n_judgments, n_new, n_changed) values (?, ?, cast(now() at time zone 'UTC' as timestamp), ?, ?, ?, "
            "?, ?, ?)",
            [collection_id, version, judge.strip(), HUMAN, str(path), len(judgments), new, changed],
        )
    return (f"collection {collection_id}: qrels version {version} from {path}: {len(judgments)} judgments by "
            f"{judge.strip()} ({new} new, {changed} changed a grade)")  # fmt: skip


def check_known(con: duckdb.DuckDBPyConnection, collection_id: str, path: Path, judgments: list[Judgment]) -> None:
    """InputError naming the first line whose question or document the collection does not have. Its questions:
    raw.questions', its judgments' and its runs'; its documents: raw.documents' when it has them, else its
    judgments' and its runs'."""
    c = {"c": collection_id}
    questions = {q for (q,) in con.execute(
        "select question_id from raw.questions where collection_id = $c union select question_id from raw.qrels "
        "where collection_id = $c union select question_id from raw.judgments where collection_id = $c union "
        "select distinct question_id from raw.rankings where collection_id = $c", c).fetchall()}  # fmt: skip
    documents = {d for (d,) in con.execute("select doc_id from raw.documents where collection_id = $c", c).fetchall()}
    if not documents:
        documents = {d for (d,) in con.execute(
            "select doc_id from raw.qrels where collection_id = $c union select doc_id from raw.judgments "
            "where collection_id = $c union select distinct doc_id from raw.rankings where collection_id = $c",
            c).fetchall()}  # fmt: skip
    for item in judgments:
        if item.question_id not in questions:
            raise InputError(f"{path} line {item.line}: question {item.question_id!r} is not a question of "
                             f"collection {collection_id!r}")  # fmt: skip
        if item.doc_id not in documents:
            raise InputError(f"{path} line {item.line}: doc {item.doc_id!r} is not a document of collection "
                             f"{collection_id!r}")  # fmt: skip


class Graded(Protocol):
    """What changes() reads of a judgment: a label file's (Judgment) or an automatic judge's."""

    @property
    def question_id(self) -> str: ...
    @property
    def doc_id(self) -> str: ...
    @property
    def grade(self) -> int: ...


def changes(
    con: duckdb.DuckDBPyConnection, collection_id: str, judgments: Sequence[Graded], judge_kind: str = HUMAN
) -> tuple[int, int]:
    """How many of the judgments are of pairs without any judgment yet, and how many change the grade the
    measures use at the latest version: by int_qrels_unioned's precedence (people's label files, then the base
    qrels, then automatic judges), a person's grade always can, an automatic judge's only where no person graded."""
    current = {(q, d): (g, p) for q, d, g, p in con.execute(
        """
        with candidates as (
            select question_id, doc_id, relevance as grade, 1 as precedence, 0 as qrels_version from raw.qrels
            where collection_id = $c
            union all
            select question_id, doc_id, grade, case when judge_kind = 'human' then 0 else 2 end, qrels_version
            from raw.judgments where collection_id = $c
        )
        select question_id, doc_id, grade, precedence from candidates
        qualify row_number() over (partition by question_id, doc_id order by precedence, qrels_version desc) = 1
        """, {"c": collection_id}).fetchall()}  # fmt: skip
    replaceable = {0, 1, 2} if judge_kind == HUMAN else {2}  # the precedences of the grades this kind replaces
    new = sum((j.question_id, j.doc_id) not in current for j in judgments)
    changed = 0
    for j in judgments:
        grade, precedence = current.get((j.question_id, j.doc_id), (j.grade, 2))
        changed += precedence in replaceable and grade != j.grade
    return new, changed
