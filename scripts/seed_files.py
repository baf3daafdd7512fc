"""Read the curated seed CSVs (documents and golden questions) with checks that name the file and line at fault."""

from __future__ import annotations

import csv
from pathlib import Path

from retrievers import Document
from warehouse import InputError


def read_rows(path: Path, columns: list[str], key: str) -> list[dict[str, str]]:
    """Rows of a CSV with a header that has `columns`; `key` must be non-empty and unique."""
    try:
        handle = path.open(newline="", encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    with handle:
        reader = csv.DictReader(handle, strict=True)
        header = reader.fieldnames or []
        missing = [c for c in columns if c not in header]
        if missing:
            raise InputError(f"{path}:1: missing column(s) {', '.join(missing)} (header is {','.join(header)})")
        rows: list[dict[str, str]] = []
        seen: dict[str, int] = {}
        try:
            for row in reader:
                line = reader.line_num
                if None in row or any(row[c] is None for c in columns):
                    raise InputError(f"{path}:{line}: expected {len(header)} fields")
                value = row[key]
                if not value.strip():
                    raise InputError(f"{path}:{line}: empty {key}")
                if value in seen:
                    raise InputError(f"{path}:{line}: duplicate {key} {value!r} (first on line {seen[value]})")
                seen[value] = line
                rows.append(row)
        except csv.Error as exc:
            raise InputError(f"{path}:{reader.line_num}: {exc}") from None
    if not rows:
        raise InputError(f"{path}: no rows")
    return rows


def read_documents(path: Path) -> list[Document]:
    """The collection's documents, in file order (the keyword retriever keeps that order on ties)."""
    return [Document(r["doc_id"], r["title"], r["text"]) for r in read_rows(path, ["doc_id", "title", "text"], "doc_id")]


def read_questions(path: Path) -> list[tuple[str, str]]:
    """(question_id, question) pairs, in file order."""
    return [(r["question_id"], r["question"]) for r in read_rows(path, ["question_id", "question"], "question_id")]
