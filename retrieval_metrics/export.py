"""Export the marts as CSV or Parquet files, or one run in trec_eval's `-q` text layout.

    retrieval-metrics export --format {csv,parquet,trec} --out PATH
                             [--collection C] [--run-id R] [--db PATH] [--digits N]

csv, parquet: --out is a directory (created if missing). question_metrics, run_metrics and missed_relevant_docs
    each go to <out>/<table>.csv or .parquet through DuckDB's COPY, rows ordered by all columns, optionally
    filtered by --collection and --run-id. Re-running overwrites the files.
trec: --collection and --run-id name exactly one run; --out is a file, or - for stdout. One line per
    (measure, question), questions sorted by question_id, then the `all` lines with the run's means, each
    "%-22s\\t%s\\t%.4f" as trec_eval prints them (--digits decimals, default 4). Only the questions run_metrics
    averages (question_metrics.is_averaged) get lines. Measure order, k ascending within each k-measure:
        num_ret num_rel map Rprec recip_rank P_k recall_k ndcg_cut_k success_k      (per question)
        num_q num_ret num_rel map Rprec recip_rank P_k recall_k ndcg_cut_k success_k (all)
    num_ret and num_rel in `all` are sums over the averaged questions; the rest are run_metrics' means.

Reads through a read-only connection. Errors are InputErrors, raised before anything is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb

from retrieval_metrics.warehouse import InputError, open_built, sql_literal

TABLES = ("question_metrics", "run_metrics", "missed_relevant_docs")
MEASURE_WIDTH = 22  # trec_eval: "%-22s\t%s\t%.4f"
# trec_eval name -> (question_metrics column, run_metrics column); the k-dependent ones get "_k" appended
WHOLE_RANKING = {"map": ("average_precision", "map"), "Rprec": ("r_precision", "r_precision"),
                 "recip_rank": ("reciprocal_rank", "mrr")}
AT_K = {"P": ("precision", "precision"), "recall": ("recall", "recall"), "ndcg_cut": ("ndcg", "ndcg"),
        "success": ("hit", "hit_rate")}


def run_filter(collection_id: str | None, run_id: str | None) -> tuple[str, list[object]]:
    """A where clause selecting the given collection and/or run, and its parameters."""
    conditions = ["true"]
    params: list[object] = []
    for column, value in (("collection_id", collection_id), ("run_id", run_id)):
        if value is not None:
            conditions.append(f"{column} = ?")
            params.append(value)
    return " and ".join(conditions), params


def describe(path: Path, collection_id: str | None, run_id: str | None) -> str:
    if collection_id is None and run_id is None:
        return f"no metrics in {path}: run `make run` first"
    wanted = " ".join(
        f"{kind} {value!r}" for kind, value in (("collection", collection_id), ("run", run_id)) if value is not None
    )
    return f"no metrics for {wanted} in {path}"


def export_tables(
    con: duckdb.DuckDBPyConnection, out_dir: Path, file_format: str, where: str, params: list[object]
) -> list[Path]:
    """COPY each mart, filtered and ordered by all columns, to <out_dir>/<table>.<format>."""
    out_dir.mkdir(parents=True, exist_ok=True)
    options = "format parquet" if file_format == "parquet" else "format csv, header"
    written = []
    for table in TABLES:
        target = out_dir / f"{table}.{file_format}"
        con.execute(
            f"copy (select * from main.{table} where {where} order by all) to {sql_literal(target)} ({options})", params
        )
        written.append(target)
    return written


def trec_lines(con: duckdb.DuckDBPyConnection, collection_id: str, run_id: str, digits: int) -> list[str]:
    """The run in trec_eval -q layout; raises InputError when it has no averaged question."""
    key = [collection_id, run_id]
    ks = [k for (k,) in con.execute(
        "select distinct k from main.question_metrics where collection_id = ? and run_id = ? order by k", key
    ).fetchall()]
    question_columns = [column for column, _ in [*WHOLE_RANKING.values(), *AT_K.values()]]
    rows = con.execute(
        f"""
        select question_id, k, coalesce(n_retrieved, 0), coalesce(n_relevant, 0), {', '.join(question_columns)}
        from main.question_metrics
        where collection_id = ? and run_id = ? and is_averaged
        order by question_id, k
        """,
        key,
    ).fetchall()
    run_columns = [column for _, column in [*WHOLE_RANKING.values(), *AT_K.values()]]
    means = con.execute(
        f"""
        select k, n_questions, {', '.join(run_columns)}
        from main.run_metrics where collection_id = ? and run_id = ? order by k
        """,
        key,
    ).fetchall()
    if not rows or not means:
        raise InputError(f"run {run_id!r} of collection {collection_id!r} has no averaged question")

    def line(measure: str, question_id: str, value: float) -> str:
        text = str(value) if isinstance(value, int) else f"{value:.{digits}f}"
        return f"{measure:<{MEASURE_WIDTH}}\t{question_id}\t{text}"

    def measure_lines(question_id: str, by_k: dict[int, Sequence[float]]) -> list[str]:
        """WHOLE_RANKING from the smallest k (they are the same at every k), then each AT_K measure per k."""
        first = by_k[min(by_k)]
        out = [line(name, question_id, first[i]) for i, name in enumerate(WHOLE_RANKING)]
        for j, name in enumerate(AT_K, start=len(WHOLE_RANKING)):
            out.extend(line(f"{name}_{k}", question_id, by_k[k][j]) for k in ks if k in by_k)
        return out

    per_question: dict[str, dict[int, tuple]] = {}
    for question_id, k, n_retrieved, n_relevant, *values in rows:
        per_question.setdefault(question_id, {})[k] = (n_retrieved, n_relevant, *values)
    lines: list[str] = []
    for question_id in sorted(per_question):
        by_k = per_question[question_id]
        n_retrieved, n_relevant = by_k[min(by_k)][:2]
        lines += [line("num_ret", question_id, n_retrieved), line("num_rel", question_id, n_relevant)]
        lines += measure_lines(question_id, {k: values[2:] for k, values in by_k.items()})
    totals = [by_k[min(by_k)][:2] for by_k in per_question.values()]
    lines.append(line("num_q", "all", means[0][1]))
    lines.append(line("num_ret", "all", sum(t[0] for t in totals)))
    lines.append(line("num_rel", "all", sum(t[1] for t in totals)))
    lines += measure_lines("all", {k: values for k, _, *values in means})
    return lines


def export(
    database: Path, file_format: str, out: str, collection_id: str | None, run_id: str | None, digits: int = 4
) -> str:
    """Do the export; returns what to report on stdout, or, for --format trec to stdout (`out` "-"), the text."""
    if digits < 0 or digits > 17:
        raise InputError(f"--digits {digits} is out of range (0 to 17)")
    if file_format == "trec" and (collection_id is None or run_id is None):
        raise InputError("--format trec needs --collection and --run-id (exactly one run)")
    if file_format != "trec" and out == "-":
        raise InputError(f"--out - (stdout) is only for --format trec; --format {file_format} needs a directory")
    where, params = run_filter(collection_id, run_id)
    with open_built(database) as con:
        (count,) = con.execute(f"select count(*) from main.question_metrics where {where}", params).fetchone()
        if count == 0:
            raise InputError(describe(database, collection_id, run_id))
        if file_format != "trec":
            written = export_tables(con, Path(out), file_format, where, params)
            return "\n".join(f"wrote {target}" for target in written)
        assert collection_id is not None and run_id is not None
        text = "\n".join(trec_lines(con, collection_id, run_id, digits)) + "\n"
    if out == "-":
        return text.removesuffix("\n")
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    return f"wrote {target}"
