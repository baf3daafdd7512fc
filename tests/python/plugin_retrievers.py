"""Plug-in retrievers for tests/python/test_plugins.py, loaded by `rank --retriever plugin_retrievers:NAME`
(this folder on PYTHONPATH): one that works, and one per way a plug-in can go wrong."""

from __future__ import annotations

from collections.abc import Sequence

from retrieval_metrics.retrievers import Document

__version__ = "0.3"


class WordCount:
    """Score = how many of the question's lowercase words are in the doc's title + text; `bonus` is added to the
    score of `favourite`, to show that parameters arrive."""

    def __init__(self, documents: Sequence[Document], bonus: float = 0.0, favourite: str = "") -> None:
        self.words = {d.doc_id: set(f"{d.title} {d.text}".lower().split()) for d in documents}
        self.bonus, self.favourite = bonus, favourite

    def search(self, question: str, k: int) -> list[tuple[str, float]]:
        terms = set(question.lower().split())
        scored = [(doc_id, len(terms & words) + (self.bonus if doc_id == self.favourite else 0.0))
                  for doc_id, words in self.words.items()]  # fmt: skip
        return sorted(scored, key=lambda pair: -pair[1])[:k]


class EveryDoc(WordCount):
    """Ignores k: returns every document."""

    def search(self, question: str, k: int) -> list[tuple[str, float]]:
        return super().search(question, len(self.words))


class Chunked(WordCount):
    """Returns two chunks per doc (doc#0, doc#1), the second scoring one less."""

    def search(self, question: str, k: int) -> list[tuple[str, float]]:
        return [(f"{doc_id}#{part}", score - part) for doc_id, score in super().search(question, k) for part in (0, 1)]


class Broken(WordCount):
    """Goes wrong for the question whose text contains `trigger`, in the way `problem` names."""

    def __init__(self, documents: Sequence[Document], problem: str = "raises", trigger: str = "") -> None:
        super().__init__(documents)
        self.problem, self.trigger = problem, trigger

    def search(self, question: str, k: int) -> list[tuple[str, float]]:
        results = super().search(question, k)
        if self.trigger not in question:
            return results
        if self.problem == "raises":
            raise RuntimeError("index is offline")
        if self.problem == "unknown_doc":
            return [*results, ("no-such-doc", 1.0)]
        if self.problem == "duplicate":
            return [*results, results[0]]
        if self.problem == "nan":
            return [(results[0][0], float("nan")), *results[1:]]
        if self.problem == "not_a_pair":
            return [*results, ("lonely",)]  # type: ignore[list-item]
        raise AssertionError(self.problem)


def not_a_retriever(documents: Sequence[Document]) -> object:
    """Builds something with no search method."""
    return object()
