"""A plug-in retriever for `retrieval-metrics rank --retriever tfidf_retriever:TfidfRetriever`: TF-IDF cosine
similarity through bm25s' tokenizer and numpy, to copy and change. docs/plugins.md explains the protocol.

    PYTHONPATH=docs/examples retrieval-metrics rank --retriever tfidf_retriever:TfidfRetriever \
        --param sublinear_tf=true --top-k 100
"""

from __future__ import annotations

from collections.abc import Sequence

import bm25s
import numpy as np

from retrieval_metrics.retrievers import Document


class TfidfRetriever:
    """Built once with the collection's documents; `search` scores every document for one question."""

    version = "1.0"  # recorded with the run (raw.runs.parameters)

    def __init__(self, documents: Sequence[Document], sublinear_tf: bool = False) -> None:
        self.doc_ids = [d.doc_id for d in documents]
        corpus = bm25s.tokenize([f"{d.title} {d.text}" for d in documents], stopwords="en", show_progress=False)
        self.vocabulary = corpus.vocab  # token -> column
        counts = np.zeros((len(documents), len(self.vocabulary)))
        for row, tokens in enumerate(corpus.ids):
            np.add.at(counts[row], tokens, 1.0)
        tf = np.log1p(counts) if sublinear_tf else counts
        document_frequency = np.count_nonzero(counts, axis=0)
        self.idf = np.log((1 + len(documents)) / (1 + document_frequency)) + 1.0
        vectors = tf * self.idf
        self.vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)

    def search(self, question: str, k: int) -> list[tuple[str, float]]:
        """The k best documents for the question, as (doc_id, score) pairs; any order."""
        tokens = bm25s.tokenize([question], stopwords="en", return_ids=False, show_progress=False)[0]
        query = np.zeros(len(self.vocabulary))
        for token in tokens:
            if token in self.vocabulary:
                query[self.vocabulary[token]] += 1.0
        query *= self.idf
        scores = self.vectors @ (query / max(float(np.linalg.norm(query)), 1e-12))
        best = np.argsort(-scores, kind="stable")[:k]
        return [(self.doc_ids[i], float(scores[i])) for i in best]
