"""retrieval-metrics: a dbt + DuckDB warehouse that scores retrievers with trec_eval-exact measures.

The package holds what runs next to dbt: warehouse access (warehouse), the one writer of the raw tables
(raw_tables), the TREC and BEIR readers (trec, beir) and the import (importing), the built-in retrievers
(retrievers) and the ranking command (ranking), dbt and the serving copy (dbt_runner, serving), what reads the
marts (scorecard, report, export), progress bars (progress) and the `retrieval-metrics` command (cli).

For notebooks (api): `write_run(collection_id, run_id, rows)` writes a run from scored rows, `build()` builds,
`connect()` reads the marts as last published (the serving copy), `remove()` removes a run or a collection,
`collection_settings()` shows or sets a collection's own settings (per_collection), `question_tags()` sets an
imported collection's question tags (tagging).
"""

from typing import Any

__all__ = ["build", "collection_settings", "connect", "question_tags", "remove", "write_run"]


def __getattr__(name: str) -> Any:
    """The API's functions, imported on first use: the command line starts without them."""
    if name in __all__:
        from retrieval_metrics import api

        return getattr(api, name)
    raise AttributeError(f"module 'retrieval_metrics' has no attribute {name!r}")
