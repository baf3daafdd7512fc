"""Built-in retrievers. Each takes the collection's documents and one question and ranks every document."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Document:
    doc_id: str
    title: str
    text: str


@dataclass(frozen=True)
class ScoredDoc:
    doc_id: str
    score: float


Retriever = Callable[[str, Sequence[Document]], list[ScoredDoc]]


def keyword_overlap(question: str, docs: Sequence[Document]) -> list[ScoredDoc]:
    """The lesson's `retrieve_ranked`, bug for bug.

    Lowercase, split on whitespace (punctuation stays attached: "plan?" never matches "plan"), score each doc
    by the size of the set overlap with its title + " " + text, best first. Python's sort is stable, so ties
    keep the documents' seed order. Frozen forever: it is the baseline and the golden test.
    """
    terms = set(question.lower().split())
    scored = [ScoredDoc(d.doc_id, float(len(terms & set((d.title + " " + d.text).lower().split())))) for d in docs]
    return sorted(scored, key=lambda s: s.score, reverse=True)


RETRIEVERS: dict[str, tuple[Retriever, dict[str, object]]] = {
    # name -> (function, parameters recorded in raw.runs)
    "keyword_overlap": (keyword_overlap, {"tokenizer": "lowercase + whitespace split", "score": "set overlap"}),
}
