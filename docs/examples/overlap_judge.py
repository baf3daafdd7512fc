"""An automatic judge for `retrieval-metrics judge --judge overlap_judge:OverlapJudge`: grades a document by how many
of the question's content terms its title and text contain, to copy and change (an LLM call in place of the
count, say). Pure Python. docs/judging.md explains the protocol.

    PYTHONPATH=docs/examples retrieval-metrics judge --collection C --judge overlap_judge:OverlapJudge \
        --param high=3 --param low=1
"""

from __future__ import annotations

import re

TOKEN = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    "a about an and are as at be by can do does for from has have how i if in is it its of on or that the their "
    "there this to was what when where which who why will with you your".split()
)


def terms(text: str | None) -> list[str]:
    """The content terms of a text, lowercased, in order of first appearance, each once (stopwords left out)."""
    seen: dict[str, None] = {}
    for token in TOKEN.findall((text or "").lower()):
        if token not in STOPWORDS:
            seen.setdefault(token, None)
    return list(seen)


class OverlapJudge:
    """Grade 2 if at least `high` of the question's content terms occur in the document's title + text, 1 if at
    least `low` do, else 0; the rationale names the terms matched."""

    version = "1.0"  # recorded with the judgments (raw.judgment_versions.judge_version)

    def __init__(self, high: int = 3, low: int = 1) -> None:
        for name, value in (("high", high), ("low", low)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number of terms, 1 or more, not {value!r}")
        if low > high:
            raise ValueError(f"low ({low}) must not be above high ({high})")
        self.high, self.low = high, low

    def judge(self, item: object) -> tuple[int, str]:
        """(grade, rationale) for one JudgeItem: question_text, doc_title and doc_text (any may be None)."""
        question = terms(getattr(item, "question_text", None))
        document = set(terms(f"{getattr(item, 'doc_title', None) or ''} {getattr(item, 'doc_text', None) or ''}"))
        matched = [term for term in question if term in document]
        grade = 2 if len(matched) >= self.high else 1 if len(matched) >= self.low else 0
        found = ", ".join(matched) if matched else "none"
        return grade, f"{len(matched)} of {len(question)} question terms in the document: {found}"
