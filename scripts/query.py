"""Run SQL against the warehouse read-only and print the result as a table.

    python scripts/query.py "select * from run_metrics"      # or: make sql Q="select ..."
"""

from __future__ import annotations

import argparse
import sys

import duckdb

from warehouse import database_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sql", help="one SQL statement")
    parser.add_argument("--db", help="DuckDB file (default: $RETRIEVAL_DB, else retrieval.duckdb in the repo root)")
    args = parser.parse_args(argv)
    try:
        with duckdb.connect(str(database_path(args.db)), read_only=True) as con:
            con.sql(args.sql).show(max_width=200, max_rows=200)
    except duckdb.Error as exc:
        print(f"query.py: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
