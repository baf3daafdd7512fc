"""Rank every golden question of the Docent collection with a built-in retriever and write it as one run.

    python scripts/rank.py --retriever keyword_overlap [--run-id ID] [--db PATH]

The full ranking of every document goes to raw.rankings and one row to raw.runs, replacing that run only,
in one transaction. Bad arguments or seed files give one line on stderr, exit 2, and write nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import duckdb

from retrievers import RETRIEVERS
from seed_files import read_documents, read_questions
from warehouse import SEEDS_DIR, InputError, Ranking, check_identifier, database_path, replace_run

COLLECTION_ID = "docent"


def rank_collection(retriever_name: str, docs_csv: Path, questions_csv: Path) -> Ranking:
    """Run one retriever over every question; ranks are 1..N in the retriever's order."""
    retrieve, _ = RETRIEVERS[retriever_name]
    docs = read_documents(docs_csv)
    question_ids: list[str] = []
    doc_ids: list[str] = []
    ranks: list[int] = []
    scores: list[float] = []
    for question_id, question in read_questions(questions_csv):
        for position, scored in enumerate(retrieve(question, docs), start=1):
            question_ids.append(question_id)
            doc_ids.append(scored.doc_id)
            ranks.append(position)
            scores.append(scored.score)
    return Ranking(question_ids, doc_ids, ranks, scores)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--retriever", required=True, choices=sorted(RETRIEVERS))
    parser.add_argument("--run-id", help="run id to write (default: the retriever's name)")
    parser.add_argument("--db", help="DuckDB file (default: $RETRIEVAL_DB, else retrieval.duckdb in the repo root)")
    parser.add_argument("--docs", type=Path, default=SEEDS_DIR / "docs.csv")
    parser.add_argument("--questions", type=Path, default=SEEDS_DIR / "golden_questions.csv")
    args = parser.parse_args(argv)
    run_id = args.run_id if args.run_id is not None else args.retriever
    try:
        check_identifier("run id", run_id)
        ranking = rank_collection(args.retriever, args.docs, args.questions)
        _, parameters = RETRIEVERS[args.retriever]
        with duckdb.connect(str(database_path(args.db))) as con:
            written = replace_run(
                con,
                collection_id=COLLECTION_ID,
                run_id=run_id,
                retriever=args.retriever,
                parameters=json.dumps(parameters, sort_keys=True),
                ranking=ranking,
            )
    except InputError as exc:
        print(f"rank.py: error: {exc}", file=sys.stderr)
        return 2
    except duckdb.IOException as exc:
        print(f"rank.py: error: cannot open the database: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    print(f"rank.py: wrote run {COLLECTION_ID}/{run_id}: {written} ranked docs for {len(set(ranking.question_ids))} questions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
