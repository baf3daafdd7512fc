"""Export the marts as CSV or Parquet files, or one run in trec_eval's `-q` text layout.

    retrieval-metrics export --format {csv,parquet,trec} --out PATH
                             [--collection C] [--run-id R] [--db PATH] [--digits N]

csv, parquet: --out is a directory (created if missing). question_metrics, run_metrics, missed_relevant_docs,
    measure_catalog, question_measures and run_measures each go to <out>/<table>.csv or .parquet through
    DuckDB's COPY, rows ordered by all columns, optionally filtered by --collection and --run-id
    (measure_catalog, which has neither, is written whole). Re-running overwrites the files.
trec: --collection and --run-id name exactly one run; --out is a file, or - for stdout. Every measure of
    measure_catalog whose reference is trec_eval, named as trec_eval prints it (P_5, ndcg_cut_10, bpref,
    iprec_at_recall_0.50, ...), in the catalog's order (measure_position, k ascending within a measure): one
    line per (question, measure) from question_measures, questions sorted by question_id, then the `all` lines
    from run_measures, num_q first. Each line is "%-22s\\t%s\\t%.4f" as trec_eval prints it (--digits decimals,
    default 4); summed measures (the counts num_ret, num_rel, num_rel_ret) print as integers, their sums in
    `all`. As trec_eval, geometric-mean measures (gm_map) have no per-question line, only an `all` one. Only the
    questions run_measures averages (question_measures.is_averaged) get lines: the per-question part is what
    `trec_eval -q -c -m all_trec` prints for these measures, at the warehouse's cutoffs.

Reads through the read-only connection the command opened (the serving copy by default). Errors are InputErrors, raised before anything is written.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from retrieval_metrics.warehouse import InputError, sql_literal

TABLES = ("question_metrics", "run_metrics", "missed_relevant_docs", "measure_catalog", "question_measures",
          "run_measures")  # fmt: skip
UNFILTERED = ("measure_catalog",)  # no collection_id / run_id: always written whole
MEASURE_WIDTH = 22  # trec_eval: "%-22s\t%s\t%.4f"


def run_filter(collection_id: str | None, run_id: str | None) -> tuple[str, list[object]]:
    """A where clause selecting the given collection and/or run, and its parameters."""
    conditions = ["true"]
    params: list[object] = []
    for column, value in (("collection_id", collection_id), ("run_id", run_id)):
        if value is not None:
            conditions.append(f"{column} = ?")
            params.append(value)
    return " and ".join(conditions), params


def describe(path: str, collection_id: str | None, run_id: str | None) -> str:
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
        condition, values = ("true", []) if table in UNFILTERED else (where, params)
        con.execute(
            f"copy (select * from main.{table} where {condition} order by all) to {sql_literal(target)} ({options})",
            values,
        )
        written.append(target)
    return written


def trec_lines(con: duckdb.DuckDBPyConnection, collection_id: str, run_id: str, digits: int) -> list[str]:
    """The run in trec_eval -q layout, driven by measure_catalog; raises InputError when it has no averaged
    question."""
    key = [collection_id, run_id]
    per_question = con.execute(
        """
        select measures.question_id, measures.measure_name, measures.value, catalog.aggregation = 'sum'
        from main.question_measures as measures
        inner join main.measure_catalog as catalog on measures.measure = catalog.measure
        where measures.collection_id = ? and measures.run_id = ? and measures.is_averaged
            and catalog.reference = 'trec_eval' and catalog.aggregation <> 'geometric_mean'
        order by measures.question_id, catalog.measure_position, measures.k
        """,
        key,
    ).fetchall()
    overall = con.execute(
        """
        select measures.measure_name, measures.value, catalog.aggregation = 'sum', measures.n_questions
        from main.run_measures as measures
        inner join main.measure_catalog as catalog on measures.measure = catalog.measure
        where measures.collection_id = ? and measures.run_id = ? and catalog.reference = 'trec_eval'
        order by catalog.measure_position, measures.k
        """,
        key,
    ).fetchall()
    if not per_question or not overall:
        raise InputError(f"run {run_id!r} of collection {collection_id!r} has no averaged question")

    def line(measure_name: str, question_id: str, value: float, is_count: bool) -> str:
        text = f"{value:.0f}" if is_count else f"{value:.{digits}f}"
        return f"{measure_name:<{MEASURE_WIDTH}}\t{question_id}\t{text}"

    lines = [line(name, question_id, value, is_count) for question_id, name, value, is_count in per_question]
    lines.append(line("num_q", "all", overall[0][3], True))
    lines += [line(name, "all", value, is_count) for name, value, is_count, _ in overall]
    return lines


def check_arguments(file_format: str, out: str, collection_id: str | None, run_id: str | None, digits: int) -> None:
    """InputError for arguments that do not go together, before anything is opened."""
    if digits < 0 or digits > 17:
        raise InputError(f"--digits {digits} is out of range (0 to 17)")
    if file_format == "trec" and (collection_id is None or run_id is None):
        raise InputError("--format trec needs --collection and --run-id (exactly one run)")
    if file_format != "trec" and out == "-":
        raise InputError(f"--out - (stdout) is only for --format trec; --format {file_format} needs a directory")


def export(
    con: duckdb.DuckDBPyConnection,
    source: str,
    file_format: str,
    out: str,
    collection_id: str | None,
    run_id: str | None,
    digits: int = 4,
) -> str:
    """Export from a built warehouse's marts (`source` names it in errors); returns what to report on stdout, or,
    for --format trec to stdout (`out` "-"), the text."""
    check_arguments(file_format, out, collection_id, run_id, digits)
    where, params = run_filter(collection_id, run_id)
    (count,) = con.execute(f"select count(*) from main.question_metrics where {where}", params).fetchone()
    if count == 0:
        raise InputError(describe(source, collection_id, run_id))
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
