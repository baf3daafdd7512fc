"""Rank every golden question of the Docent collection with built-in retrievers and write one run per retriever.

    python scripts/rank.py --retriever NAME [--run-id ID] [--db PATH]
    python scripts/rank.py --all [--db PATH]

Retrievers: keyword_overlap (the lesson's), keyword_normalized, bm25, and dense (its packages come from
`make install-dense`). --all ranks with every installed retriever, each run named after it; without the
dense packages it says in one line that dense was skipped, and why.

Each run's full ranking of every document goes to raw.rankings and one row to raw.runs, replacing that run
only, in one transaction per run. A dense run also caches the document embeddings in raw.doc_embeddings in
that same transaction, and reuses them while a document's title and text are unchanged. Bad arguments or
seed files give one line on stderr, exit 2, and write nothing; so does a database another process holds (the
line names that process). On a terminal a progress bar runs on stderr; in a pipe or under CI, only the one
line per run.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import duckdb
import numpy as np

from retrievers import (
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
from progress import progress
from seed_files import read_documents, read_questions
from warehouse import (
    SEEDS_DIR,
    InputError,
    Ranking,
    cached_doc_embeddings,
    check_identifier,
    connect,
    database_error,
    database_path,
    store_doc_embeddings,
    transaction,
    write_run,
)

COLLECTION_ID = "docent"


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


def rank_lexical(name: str, docs: Sequence[Document], questions: Sequence[tuple[str, str]]) -> Ranking:
    """One lexical retriever over every question."""
    retrieve, _ = LEXICAL_RETRIEVERS[name]
    return to_ranking([q for q, _ in questions], retrieve([text for _, text in questions], docs))


def doc_embeddings(
    con: duckdb.DuckDBPyConnection, encoder: Encoder, docs: Sequence[Document]
) -> tuple[np.ndarray, int]:
    """The docs' embeddings, one row each, and how many were computed: cached ones are reused, the missing or
    stale ones (title or text changed) are computed and cached, in the caller's transaction."""
    doc_ids = [d.doc_id for d in docs]
    texts = [doc_text(d) for d in docs]
    vectors = cached_doc_embeddings(con, COLLECTION_ID, encoder.model, doc_ids, texts)
    missing = [i for i, doc_id in enumerate(doc_ids) if doc_id not in vectors]
    if missing:
        fresh = encoder.encode([texts[i] for i in missing]).tolist()
        store_doc_embeddings(
            con, COLLECTION_ID, encoder.model, [doc_ids[i] for i in missing], [texts[i] for i in missing], fresh
        )
        vectors.update(zip([doc_ids[i] for i in missing], fresh, strict=True))
    return np.array([vectors[doc_id] for doc_id in doc_ids], dtype=np.float32), len(missing)


def rank_dense(
    con: duckdb.DuckDBPyConnection, encoder: Encoder, docs: Sequence[Document], questions: Sequence[tuple[str, str]]
) -> tuple[Ranking, int]:
    """The dense retriever over every question (questions are embedded now, docs through the cache), and how
    many doc embeddings were computed."""
    vectors, computed = doc_embeddings(con, encoder, docs)
    question_vectors = encoder.encode([text for _, text in questions])
    return to_ranking([q for q, _ in questions], dense(question_vectors, docs, vectors)), computed


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, rank, write one run per retriever; 0 on success, 2 on bad input."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--retriever", choices=RETRIEVER_NAMES)
    which.add_argument("--all", action="store_true", help="rank with every installed retriever, one run each")
    parser.add_argument("--run-id", help="run id to write (default: the retriever's name); not with --all")
    parser.add_argument("--db", help="DuckDB file (default: $RETRIEVAL_DB, else retrieval.duckdb in the repo root)")
    parser.add_argument("--docs", type=Path, default=SEEDS_DIR / "docs.csv")
    parser.add_argument("--questions", type=Path, default=SEEDS_DIR / "golden_questions.csv")
    args = parser.parse_args(argv)
    names = list(RETRIEVER_NAMES) if args.all else [args.retriever]
    try:
        if args.all and args.run_id is not None:
            raise InputError("--run-id names a single run: use it with --retriever, not --all")
        run_id = args.run_id if args.run_id is not None else args.retriever
        if run_id is not None:
            check_identifier("run id", run_id)
        docs = read_documents(args.docs)
        questions = read_questions(args.questions)
        encoder: Encoder | None = None
        if DENSE in names:
            try:
                encoder = load_dense_encoder()
            except ImportError as exc:
                if not args.all:
                    raise InputError(
                        f"the dense retriever needs its packages: run `make install-dense` ({exc})"
                    ) from None
                print(f"rank.py: skipped dense: its packages are not installed ({exc}); `make install-dense` adds them")
                names.remove(DENSE)
        # On a terminal, a bar over (retriever, question) pairs, advanced as each retriever finishes its questions.
        with progress(total=len(names) * len(questions), desc="rank.py", unit="question") as bar:
            # Lexical rankings are computed before the database is opened: a failure there writes nothing.
            lexical: dict[str, Ranking] = {}
            for name in names:
                if name != DENSE:
                    bar.set_postfix_str(name)
                    lexical[name] = rank_lexical(name, docs, questions)
                    bar.update(len(questions))
            with connect(database_path(args.db)) as con:
                for name in names:
                    run = run_id or name
                    note = ""
                    with transaction(con):
                        if name == DENSE and encoder is not None:
                            bar.set_postfix_str(name)
                            ranking, computed = rank_dense(con, encoder, docs, questions)
                            bar.update(len(questions))
                            parameters = dense_parameters(encoder)
                            note = f" ({computed} doc embeddings computed, {len(docs) - computed} reused)"
                        else:
                            ranking, parameters = lexical[name], LEXICAL_RETRIEVERS[name][1]
                        written = write_run(
                            con,
                            collection_id=COLLECTION_ID,
                            run_id=run,
                            retriever=name,
                            parameters=json.dumps(parameters, sort_keys=True),
                            ranking=ranking,
                        )
                    bar.write(
                        f"rank.py: wrote run {COLLECTION_ID}/{run}: {written} ranked docs for "
                        f"{len(set(ranking.question_ids))} questions{note}",
                        file=sys.stdout,
                    )
    except InputError as exc:
        print(f"rank.py: error: {exc}", file=sys.stderr)
        return 2
    except duckdb.IOException as exc:
        print(database_error("rank.py", database_path(args.db), exc), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
