"""Export the marts as CSV, Parquet or JSON Lines files, or one run in trec_eval's `-q` text layout.

    retrieval-metrics export --format {csv,parquet,jsonl,trec} --out PATH [--table T ...]
                             [--collection C] [--run-id R] [--db PATH] [--digits N]

csv, parquet, jsonl: --out is a directory (created if missing). question_metrics, run_metrics,
    missed_relevant_docs, measure_catalog, question_measures and run_measures (or the marts --table names, e.g.
    judging_queue for a labelling tool) each go to <out>/<table>.csv, .parquet or .jsonl (one JSON object per
    row) through DuckDB's COPY, rows ordered by all columns, optionally filtered by --collection and --run-id
    (a table without such a column is not filtered by it: measure_catalog is written whole; --run-id with a
    table that has no runs, judging_queue, is refused). Re-running overwrites the files.
trec: --collection and --run-id name exactly one run; --out is a file, or - for stdout. Every measure of
    measure_catalog whose reference is trec_eval, named as trec_eval prints it (P_5, ndcg_cut_10, bpref,
    iprec_at_recall_0.50, ...), in the catalog's order (measure_position, k ascending within a measure): one
    line per (question, measure) from question_measures, questions sorted by question_id, then the `all` lines
    from run_measures, num_q first. Each line is "%-22s\\t%s\\t%.4f" as trec_eval prints it (--digits decimals,
    default 4); summed measures (the counts num_ret, num_rel, num_rel_ret) print as integers, their sums in
    `all`. As trec_eval, geometric-mean measures (gm_map) have no per-question line, only an `all` one. Only the
    questions run_measures averages (question_measures.is_averaged) get lines: the per-question part is what
    `trec_eval -q -c -m all_trec` prints for these measures, at the warehouse's cutoffs.

Reads through the read-only connection the command opened (the serving copy by default). Errors are InputErrors,
raised before anything is written.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

import duckdb

from retrieval_metrics.warehouse import InputError, sql_literal

TABLES = ("question_metrics", "run_metrics", "missed_relevant_docs", "measure_catalog", "question_measures",
          "run_measures")  # fmt: skip
FILE_OPTIONS = {"csv": "format csv, header", "parquet": "format parquet", "jsonl": "format json"}
MEASURE_WIDTH = 22  # trec_eval: "%-22s\t%s\t%.4f"


def run_filter(collection_id: str | None, run_id: str | None, columns: Collection[str] | None = None
               ) -> tuple[str, list[object]]:  # fmt: skip
    """A where clause selecting the given collection and/or run (of a table with these `columns`: a filter on a
    column it has not got is left out), and its parameters."""
    conditions = ["true"]
    params: list[object] = []
    for column, value in (("collection_id", collection_id), ("run_id", run_id)):
        if value is not None and (columns is None or column in columns):
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
    con: duckdb.DuckDBPyConnection, out_dir: Path, file_format: str, tables: Sequence[str],
    collection_id: str | None, run_id: str | None,
) -> list[Path]:  # fmt: skip
    """COPY each mart, filtered and ordered by all columns, to <out_dir>/<table>.<format>."""
    columns = table_columns(con, tables)
    unfilterable = [table for table in tables if run_id is not None and "collection_id" in columns[table]
                    and "run_id" not in columns[table]]  # fmt: skip
    if unfilterable:
        raise InputError(f"--run-id: {', '.join(unfilterable)} has no runs; export it with --collection alone")
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for table in tables:
        target = out_dir / f"{table}.{file_format}"
        where, params = run_filter(collection_id, run_id, columns[table])
        con.execute(f"copy (select * from main.{table} where {where} order by all) to {sql_literal(target)} "
                    f"({FILE_OPTIONS[file_format]})", params)  # fmt: skip
        written.append(target)
    return written


def table_columns(con: duckdb.DuckDBPyConnection, tables: Sequence[str]) -> dict[str, set[str]]:
    rows = con.execute("select table_name, column_name from information_schema.columns where table_schema = 'main'"
                       " and list_contains(?, table_name)", [list(tables)]).fetchall()  # fmt: skip
    columns: dict[str, set[str]] = {table: set() for table in tables}
    for table, column in rows:
        columns[table].add(column)
    return columns


# a row named as trec_eval prints its measure (map, P_5), not a measure instance (AP(rel=2), nDCG(gains={2:3})@10)
TREC_NAMED = ("(measures.measure_name = measures.measure "
              "or measures.measure_name = measures.measure || '_' || cast(measures.k as varchar))")


def trec_lines(con: duckdb.DuckDBPyConnection, collection_id: str, run_id: str, digits: int) -> list[str]:
    """The run in trec_eval -q layout, driven by measure_catalog; raises InputError when it has no averaged
    question."""
    key = [collection_id, run_id]
    per_question = con.execute(
        f"""
        select measures.question_id, measures.measure_name, measures.value, catalog.aggregation = 'sum'
        from main.question_measures as measures
        inner join main.measure_catalog as catalog on measures.measure = catalog.measure
        where measures.collection_id = ? and measures.run_id = ? and measures.is_averaged
            and catalog.reference = 'trec_eval' and catalog.aggregation <> 'geometric_mean' and {TREC_NAMED}
        order by measures.question_id, catalog.measure_position, measures.k
        """,
        key,
    ).fetchall()
    overall = con.execute(
        f"""
        select measures.measure_name, measures.value, catalog.aggregation = 'sum', measures.n_questions
        from main.run_measures as measures
        inner join main.measure_catalog as catalog on measures.measure = catalog.measure
        where measures.collection_id = ? and measures.run_id = ? and catalog.reference = 'trec_eval' and {TREC_NAMED}
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


def check_arguments(file_format: str, out: str, collection_id: str | None, run_id: str | None, digits: int,
                    tables: Sequence[str] = ()) -> None:  # fmt: skip
    """InputError for arguments that do not go together, before anything is opened."""
    if tables and file_format == "trec":
        raise InputError("--table is for --format csv, parquet or jsonl; --format trec writes one run's measures")
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
    tables: Sequence[str] = (),
) -> str:
    """Export from a built warehouse's marts (`source` names it in errors): `tables`, else TABLES; returns what
    to report on stdout, or, for --format trec to stdout (`out` "-"), the text."""
    check_arguments(file_format, out, collection_id, run_id, digits, tables)
    where, params = run_filter(collection_id, run_id)
    (count,) = con.execute(f"select count(*) from main.question_metrics where {where}", params).fetchone()
    if count == 0:
        raise InputError(describe(source, collection_id, run_id))
    if file_format != "trec":
        written = export_tables(con, Path(out), file_format, tables or TABLES, collection_id, run_id)
        return "\n".join(f"wrote {target}" for target in written)
    assert collection_id is not None and run_id is not None
    text = "\n".join(trec_lines(con, collection_id, run_id, digits)) + "\n"
    if out == "-":
        return text.removesuffix("\n")
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    return f"wrote {target}"
