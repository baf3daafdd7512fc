"""Print the scorecard: the lesson's per-k table (Recall@k, Precision@k, NDCG@k) and MRR for every run.

    python scripts/scorecard.py [--db PATH]

Reads the run_metrics mart through a read-only connection.
"""

from __future__ import annotations

import argparse
import sys

import duckdb

from warehouse import database_path


def scorecard(con: duckdb.DuckDBPyConnection) -> str:
    rows = con.execute(
        """
        select collection_id, run_id, retriever, k, n_questions, recall, precision, ndcg, mrr
        from main.run_metrics
        order by collection_id, run_id, k
        """
    ).fetchall()
    lines: list[str] = []
    current: tuple[str, str] | None = None
    mrr = 0.0
    for collection_id, run_id, retriever, k, n_questions, recall, precision, ndcg, run_mrr in rows:
        if (collection_id, run_id) != current:
            if current is not None:
                lines.append(f"MRR (rank-independent) = {mrr:.3f}\n")
            current = (collection_id, run_id)
            lines.append(f"{collection_id} / {run_id}  (retriever {retriever}, {n_questions} questions)")
        lines.append(f"k={k:<3} Recall@{k}={recall:.3f}   Precision@{k}={precision:.3f}   NDCG@{k}={ndcg:.3f}")
        mrr = run_mrr
    if current is not None:
        lines.append(f"MRR (rank-independent) = {mrr:.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", help="DuckDB file (default: $RETRIEVAL_DB, else retrieval.duckdb in the repo root)")
    args = parser.parse_args(argv)
    path = database_path(args.db)
    if not path.exists():
        print(f"scorecard.py: error: {path} does not exist: run `make run` first", file=sys.stderr)
        return 2
    with duckdb.connect(str(path), read_only=True) as con:
        text = scorecard(con)
    print(text or "no runs yet: write one with scripts/rank.py, then dbt build")
    return 0


if __name__ == "__main__":
    sys.exit(main())
