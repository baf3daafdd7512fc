"""retrieval-metrics: a dbt + DuckDB warehouse that scores retrievers with trec_eval-exact measures.

The package holds what runs next to dbt: warehouse access (warehouse), the one writer of the raw tables
(raw_tables), the TREC and BEIR readers (trec, beir) and the import (importing), the built-in retrievers
(retrievers) and the ranking command (ranking), dbt and the serving copy (dbt_runner, serving), what reads the
marts (scorecard, report, export), progress bars (progress) and the `retrieval-metrics` command (cli).
"""
