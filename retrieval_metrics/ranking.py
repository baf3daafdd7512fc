"""Rank a collection's questions with the built-in retrievers, or with a plug-in (plugins), one run each.

The documents and questions are read as the next build will see them, without dbt (retrieval_metrics.collections):
Docent's from its seed files, an imported collection's from the raw tables, so an edited seed file is what gets
ranked and a seed with a missing or repeated id stops here. Every retriever ranks by the collection's tie rule
(tie_rules: trec_eval's unless its settings say otherwise; Docent's is doc_order), and --top-k cuts after that
ranking, as the TREC import would. Each run's full ranking of every document goes to raw.rankings, each
question's search time to raw.question_latencies and one row to raw.runs, replacing that run only, in one
transaction per run. A dense run also caches the document embeddings in raw.doc_embeddings in that same
transaction, and reuses them while a document's title and text are unchanged.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np

from retrieval_metrics.collections import read_collection as collection_inputs
from retrieval_metrics.plugins import SEARCH_TIMEOUT, PluginRun, check_timeout, is_plugin, run_plugin
from retrieval_metrics.progress import progress
from retrieval_metrics.raw_tables import Ranking, Run, cached_doc_embeddings, replace_run, store_doc_embeddings
from retrieval_metrics.scored_runs import (
    LATENCY_COLUMNS,
    SCORED_COLUMNS,
    check_chunk_rule,
    write_latencies,
    write_scored_run,
)
from retrieval_metrics.retrievers import (
    DENSE,
    LEXICAL_RETRIEVERS,
    RETRIEVER_NAMES,
    Document,
    Encoder,
    ScoredDoc,
    dense,
    dense_parameters,
    doc_text,
    load_dense_encoder,
)
from retrieval_metrics.tie_rules import DOC_ORDER, collection_tie_rule
from retrieval_metrics.warehouse import InputError, check_identifier, connect, transaction

Latencies = dict[str, float]  # question_id -> its search time, milliseconds


@dataclass(frozen=True)
class RankRequest:
    """Which retrievers rank which collection; run_id names the run of a single retriever (default: its name)."""

    retrievers: Sequence[str]  # built-in names, or one plug-in's package.module:name
    collection_id: str = "docent"
    run_id: str | None = None
    every_installed: bool = False  # --all: skip dense, with one line, when its packages are missing
    top_k: int | None = None  # keep each question's first N docs (default: every document)
    params: Mapping[str, object] = field(default_factory=dict)  # a plug-in's --param pairs
    chunk_rule: str | None = None  # a plug-in that returns chunks (doc#chunk): how a doc scores from them
    timeout: float = SEARCH_TIMEOUT  # seconds each of a plug-in's searches may take

    def check(self) -> None:
        check_identifier("collection", self.collection_id)
        unknown = [name for name in self.retrievers if name not in RETRIEVER_NAMES and not is_plugin(name)]
        if unknown:
            raise InputError(
                f"unknown retriever {unknown[0]!r} (choose from {', '.join(RETRIEVER_NAMES)}, "
                "or name your own as package.module:name)"
            )
        plugins = [name for name in self.retrievers if is_plugin(name)]
        if (self.params or self.chunk_rule) and not plugins:
            raise InputError("--param and --chunks are for a plug-in retriever (--retriever package.module:name)")
        check_chunk_rule(self.chunk_rule)
        check_timeout(self.timeout)
        if self.top_k is not None and self.top_k < 1:
            raise InputError(f"--top-k must be at least 1, not {self.top_k}")
        if self.run_id is not None:
            if len(self.retrievers) != 1:
                raise InputError("--run-id names a single run: use it with --retriever, not --all")
            check_identifier("run id", self.run_id)

    def run_id_of(self, retriever: str) -> str:
        """The run a retriever writes: --run-id, else the retriever's name (a plug-in's attribute name)."""
        return self.run_id or retriever.rpartition(":")[2].rpartition(".")[2]


def read_collection(con: duckdb.DuckDBPyConnection, collection_id: str) -> tuple[list[Document], list[tuple[str, str]]]:
    """The collection's documents (in doc_position order: the order ties keep) and (question_id, question)."""
    documents, questions = collection_inputs(con, collection_id)
    return [Document(*document) for document in documents], questions


def to_ranking(question_ids: Sequence[str], rankings: Sequence[list[ScoredDoc]]) -> Ranking:
    """Column-wise rows of per-question rankings; ranks are 1..N in the retriever's order."""
    rows = [
        (q, position, s)
        for q, ranked in zip(question_ids, rankings, strict=True)
        for position, s in enumerate(ranked, 1)
    ]
    reported = any(s.matched_terms is not None for _, _, s in rows)
    return Ranking(
        question_ids=[q for q, _, _ in rows],
        doc_ids=[s.doc_id for _, _, s in rows],
        ranks=[position for _, position, _ in rows],
        scores=[s.score for _, _, s in rows],
        matched_terms=[s.matched_terms for _, _, s in rows] if reported else None,
    )


def rank_lexical(
    name: str,
    docs: Sequence[Document],
    questions: Sequence[tuple[str, str]],
    top_k: int | None = None,
    tie_rule: str = DOC_ORDER,
) -> tuple[Ranking, Latencies]:
    """One lexical retriever over every question, ranked by the tie rule, and each question's search time."""
    retrieve, _ = LEXICAL_RETRIEVERS[name]
    latencies: list[float] = []
    rankings = retrieve([text for _, text in questions], docs, top_k, tie_rule=tie_rule, latencies_ms=latencies)
    question_ids = [q for q, _ in questions]
    return to_ranking(question_ids, rankings), dict(zip(question_ids, latencies, strict=True))


def doc_embeddings(
    con: duckdb.DuckDBPyConnection, collection_id: str, encoder: Encoder, docs: Sequence[Document]
) -> tuple[np.ndarray, int]:
    """The docs' embeddings, one row each, and how many were computed: cached ones are reused, the missing or
    stale ones (title or text changed) are computed and cached, in the caller's transaction."""
    doc_ids = [d.doc_id for d in docs]
    texts = [doc_text(d) for d in docs]
    vectors = cached_doc_embeddings(con, collection_id, encoder.model, doc_ids, texts)
    missing = [i for i, doc_id in enumerate(doc_ids) if doc_id not in vectors]
    if missing:
        fresh = encoder.encode([texts[i] for i in missing]).tolist()
        store_doc_embeddings(
            con, collection_id, encoder.model, [doc_ids[i] for i in missing], [texts[i] for i in missing], fresh
        )
        vectors.update(zip([doc_ids[i] for i in missing], fresh, strict=True))
    return np.array([vectors[doc_id] for doc_id in doc_ids], dtype=np.float32), len(missing)


def rank_dense(
    con: duckdb.DuckDBPyConnection,
    collection_id: str,
    encoder: Encoder,
    docs: Sequence[Document],
    questions: Sequence[tuple[str, str]],
    top_k: int | None = None,
    tie_rule: str = DOC_ORDER,
) -> tuple[Ranking, int, Latencies]:
    """The dense retriever over every question (questions are embedded now, docs through the cache), ranked by
    the tie rule; how many doc embeddings were computed; each question's search time: its scoring and ranking
    plus an even share of embedding the questions (done in one batch)."""
    vectors, computed = doc_embeddings(con, collection_id, encoder, docs)
    start = time.perf_counter()
    question_vectors = encoder.encode([text for _, text in questions])
    share = (time.perf_counter() - start) * 1000.0 / max(len(questions), 1)
    latencies: list[float] = []
    rankings = dense(question_vectors, docs, vectors, top_k, tie_rule=tie_rule, latencies_ms=latencies)
    question_ids = [q for q, _ in questions]
    times = {q: share + ms for q, ms in zip(question_ids, latencies, strict=True)}
    return to_ranking(question_ids, rankings), computed, times


def write_plugin_run(con: duckdb.DuckDBPyConnection, run: Run, result: PluginRun, request: RankRequest) -> int:
    """A plug-in's run through the checks and ranking rule of scored_runs, with its latencies: each question's
    top N under --top-k, whatever the plug-in returned."""
    return write_scored_run(
        con,
        run,
        SCORED_COLUMNS,
        [result.question_ids, result.doc_ids, result.scores],
        top_k=request.top_k,
        chunk_rule=request.chunk_rule,
        latencies=LATENCY_COLUMNS,
        latency_params=[list(result.latencies_ms), list(result.latencies_ms.values())],
    )


def rank_collection(database: Path, request: RankRequest, say: Callable[[str], None]) -> None:
    """Rank and write one run per retriever of the request; `say` gets one line per run (and per skip)."""
    request.check()
    names = list(request.retrievers)
    encoder: Encoder | None = None
    if DENSE in names:
        try:
            encoder = load_dense_encoder()
        except ImportError as exc:
            if not request.every_installed:
                raise InputError(f"the dense retriever needs its packages: run `make install-dense` ({exc})") from None
            say(f"skipped dense: its packages are not installed ({exc}); `make install-dense` adds them")
            names.remove(DENSE)
    collection_id, top_k = request.collection_id, request.top_k
    kept = {"top_k": top_k} if top_k is not None else {}
    with connect(database) as con:
        docs, questions = read_collection(con, collection_id)
        tie_rule = collection_tie_rule(con, collection_id)
        # On a terminal, a bar over (retriever, question) pairs, advanced as each retriever finishes its questions.
        with progress(total=len(names) * len(questions), desc="rank", unit="question") as bar:
            # Lexical and plug-in rankings are computed before anything is written: a failure there writes nothing.
            computed: dict[str, tuple[Ranking, Latencies] | PluginRun] = {}
            for name in names:
                if name != DENSE:
                    bar.set_postfix_str(name)
                    if is_plugin(name):
                        computed[name] = run_plugin(
                            name, request.params, docs, questions, top_k or len(docs), bar.update, request.timeout
                        )
                    else:
                        computed[name] = rank_lexical(name, docs, questions, top_k, tie_rule)
                        bar.update(len(questions))
            for name in names:
                note = ""
                run_id = request.run_id_of(name)
                with transaction(con):
                    result = computed.get(name)
                    if isinstance(result, PluginRun):
                        run = Run(collection_id, run_id, name, {**result.parameters, **kept})
                        written = write_plugin_run(con, run, result, request)
                        n_questions = len(result.latencies_ms)
                        note = f" (median search {statistics.median(result.latencies_ms.values()):.2f} ms)"
                    else:
                        if name == DENSE and encoder is not None:
                            bar.set_postfix_str(name)
                            ranking, embedded, latencies = rank_dense(
                                con, collection_id, encoder, docs, questions, top_k, tie_rule
                            )
                            bar.update(len(questions))
                            parameters = dense_parameters(encoder)
                            note = f" ({embedded} doc embeddings computed, {len(docs) - embedded} reused)"
                        else:
                            assert isinstance(result, tuple)
                            (ranking, latencies), parameters = result, LEXICAL_RETRIEVERS[name][1]
                        run = Run(collection_id, run_id, name, {**parameters, **kept})
                        written = replace_run(con, run, *ranking.as_rows())
                        write_latencies(con, run, LATENCY_COLUMNS, [list(latencies), list(latencies.values())])
                        n_questions = len(set(ranking.question_ids))
                say(f"wrote run {collection_id}/{run.run_id}: {written} ranked docs for {n_questions} questions{note}")
