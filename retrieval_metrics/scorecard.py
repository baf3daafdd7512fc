"""Print the scorecard: the lesson's per-k table (Recall@k, Precision@k, NDCG@k) and MRR for every run, then,
for each collection with several runs, the runs side by side with wins/ties/losses and p-values against the
baseline.

    retrieval-metrics scorecard [--db PATH]
"""

from __future__ import annotations

import duckdb


def run_blocks(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The lesson's table, one block per run."""
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
    return lines


def side_by_side(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Per collection with 2+ runs: every run's means at every k, then NDCG@k against the baseline."""
    lines: list[str] = []
    collections = con.execute(
        "select collection_id from main.run_metrics group by 1 having count(distinct run_id) > 1 order by 1"
    ).fetchall()
    for (collection_id,) in collections:
        ks = [k for (k,) in con.execute(
            "select distinct k from main.run_leaderboard where collection_id = ? order by k", [collection_id]
        ).fetchall()]
        header = ["run".ljust(20)] + [f"{m}@{k}".rjust(8) for m in ("R", "P", "NDCG") for k in ks] + ["MRR".rjust(7)]
        lines += ["", f"{collection_id}: runs side by side", " ".join(header)]
        runs = con.execute(
            """
            select run_id, list(recall order by k), list(precision order by k), list(ndcg order by k), any_value(mrr)
            from main.run_leaderboard where collection_id = ? group by run_id order by run_id
            """,
            [collection_id],
        ).fetchall()
        for run_id, recalls, precisions, ndcgs, mrr in runs:
            values = [f"{v:8.3f}" for v in [*recalls, *precisions, *ndcgs]]
            lines.append(" ".join([run_id.ljust(20), *values, f"{mrr:7.3f}"]))
        comparisons = con.execute(
            """
            select run_id, baseline_run_id, k, wins, ties, losses, mean_difference,
                   t_p_value, randomization_p_value, randomization_p_value_holm
            from main.run_comparisons where collection_id = ? and metric = 'ndcg' order by run_id, k
            """,
            [collection_id],
        ).fetchall()
        if comparisons:
            lines += ["", f"NDCG@k against the baseline {comparisons[0][1]} (wins/ties/losses over questions, "
                          "paired t-test p, randomization p, randomization p Holm-adjusted across runs)"]
        for run_id, _, k, wins, ties, losses, difference, t_p, random_p, random_p_holm in comparisons:
            t_text = "   n/a" if t_p is None else f"{t_p:6.3f}"
            lines.append(
                f"{run_id:<20} k={k:<3} {wins:>3}/{ties}/{losses:<3} diff {difference:+.3f}   "
                f"t p {t_text}   rand p {random_p:6.3f}   Holm {random_p_holm:6.3f}"
            )
    return lines


def scorecard(con: duckdb.DuckDBPyConnection) -> str:
    """The whole scorecard: the lesson's table for every run, then the side-by-side comparisons."""
    return "\n".join(run_blocks(con) + side_by_side(con))
