"""Question tags: the slices of an imported collection's questions that run_tag_measures and run_tag_comparisons
report on ("how do we do on pricing questions, on questions from production traffic?"). Docent's are the seed
seeds/golden_question_tags.csv.

    retrieval-metrics import --collection C --tags tags.tsv     # alone, or with --qrels / --beir / --run
    rm.question_tags("C", {"q1": ["pricing"], "q2": ["pricing", "production"]})

A tags file has one `question_id tag` per line (blanks between the two, as in a qrels file); a question with
several tags has several lines; blank lines and lines starting with `#` are skipped. Tags replace the
collection's tags whole, in the import's transaction. Each tagged question must be a question of the collection
(its imported questions or its judged ones, after the import's own judgments): else one line names the file, the
line and the question, exit 2, nothing changed. Judgments imported or removed later must keep every tagged
question: the same check runs after them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import duckdb

from retrieval_metrics.trec import fields_of, is_content
from retrieval_metrics.warehouse import InputError

TAG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/-]*$")  # letters, digits and _ . : / -; no blanks


def check_tag(tag: str, where: str) -> str:
    if not TAG.fullmatch(tag):
        raise InputError(f"{where}: tag {tag!r} is not a plain name (letters, digits, '_', '.', ':', '/', '-')")
    return tag


def read_tags_file(path: Path) -> list[tuple[str, str, str]]:
    """The file's (question_id, tag, where) rows, `where` naming its file and line; InputError naming the line of
    a malformed or repeated one."""
    rows: list[tuple[str, str, str]] = []
    seen: dict[tuple[str, str], int] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    for number, line in enumerate(text.splitlines(), start=1):
        parts = fields_of(line)
        if not is_content(parts):
            continue
        where = f"{path}:{number}"
        if len(parts) != 2:
            raise InputError(f"{where}: expected 2 fields (question_id tag), found {len(parts)}")
        question_id, tag = parts
        check_tag(tag, where)
        if (question_id, tag) in seen:
            raise InputError(f"{where}: question {question_id!r} is tagged {tag!r} already on line "
                             f"{seen[question_id, tag]}")  # fmt: skip
        seen[question_id, tag] = number
        rows.append((question_id, tag, where))
    return rows


def mapping_rows(tags: Mapping[str, Iterable[str] | str]) -> list[tuple[str, str, str]]:
    """rm.question_tags' mapping (question id -> its tags, or one tag) as (question_id, tag, where) rows."""
    rows = []
    for question_id, given in tags.items():
        for tag in sorted({given} if isinstance(given, str) else set(given)):
            where = f"question {question_id!r}"
            rows.append((str(question_id), check_tag(str(tag), where), where))
    return rows


def replace_tags(con: duckdb.DuckDBPyConnection, collection_id: str, rows: list[tuple[str, str, str]]) -> int:
    """Replace the collection's tags with `rows`, in the caller's transaction; the number written."""
    con.execute("delete from raw.question_tags where collection_id = ?", [collection_id])
    con.executemany("insert into raw.question_tags values (?, ?, ?)",
                    [[collection_id, question_id, tag] for question_id, tag, _ in rows])  # fmt: skip
    check_tagged_questions(con, collection_id, {(question_id, tag): where for question_id, tag, where in rows})
    return len(rows)


def check_tagged_questions(
    con: duckdb.DuckDBPyConnection, collection_id: str, where: Mapping[tuple[str, str], str] | None = None
) -> None:
    """InputError if a tag of the collection names a question it has not got (neither imported nor judged), in
    the caller's transaction: after tags are written (`where` names their lines), and after judgments change."""
    found = con.execute(
        """
        select question_id, tag from raw.question_tags as tagged
        where collection_id = $collection
            and not exists (select 1 from raw.questions as known
                            where known.collection_id = $collection and known.question_id = tagged.question_id)
            and not exists (select 1 from raw.qrels as judged
                            where judged.collection_id = $collection and judged.question_id = tagged.question_id)
        order by question_id, tag
        limit 1
        """,
        {"collection": collection_id},
    ).fetchone()
    if found is None:
        return
    question_id, tag = found
    if where and (question_id, tag) in where:
        raise InputError(f"{where[question_id, tag]}: question {question_id!r} is not a question of collection "
                         f"{collection_id!r} (neither imported nor judged)")  # fmt: skip
    raise InputError(f"collection {collection_id!r}: question {question_id!r}, tagged {tag!r}, would no longer be a "
                     "question of the collection: import its tags again with --tags, without it")  # fmt: skip
