"""Time each pass DuckDB makes when `retrieval-metrics import` reads a TREC run, one statement at a time, on its own:

    python scripts/import_passes.py RUN_FILE [--db PATH]

The passes, each timed apart (so the sum is more than the one statement the import runs, which fuses 1 to 5):
reading the file (csv_source), reading every field, the checked read (trec.one_pass_run), the checked read
ranked as trec_eval ranks (trec.ranked_rows), that ranked read written to a table and committed, and the
duplicate check (trec.repeated_pair_hashes) over the written rows. The benchmark (scripts/benchmark.py) generates
the file: its work directory's data/*/run.txt; benchmarks/import-passes.md gives the passes at 10M.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import duckdb

from retrieval_metrics import trec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--db", type=Path, help="a DuckDB file to write to (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        con = duckdb.connect(str(args.db or Path(folder) / "passes.duckdb"))
        reader, _ = trec.csv_source(args.run, trec.RUN_FIELDS, trailing_text=True)
        checked = trec.one_pass_run(con, args.run)
        ranked = trec.ranked_rows(checked)
        con.execute("create or replace table ranked_run (question_id varchar, doc_id varchar, rank integer, "
                    "score double, matched_terms varchar)")  # fmt: skip
        passes = [
            ("read the file", f"select count(*) from {reader}"),
            ("read every field", f"select sum(hash(question_id, doc_id, score)) from {reader}"),
            ("read and check (one_pass_run)", f"select count(*), sum(hash(score)) from ({checked})"),
            ("read, check and rank (ranked_rows)", f"select count(*), sum(rank) from ({ranked})"),
            ("... written to a table, committed", f"insert into ranked_run {ranked}"),
            ("the duplicate check", trec.repeated_pair_hashes("ranked_run") + " limit 1"),
        ]
        for label, sql in passes:
            started = time.perf_counter()
            con.execute("begin")
            con.execute(sql).fetchall()
            con.execute("commit")
            print(f"{label:40s} {time.perf_counter() - started:6.2f} s", flush=True)
        con.close()


if __name__ == "__main__":
    main()
