"""Thin entry point: `python scripts/import_trec.py ARGS` is `retrieval-metrics import ARGS`."""

import sys

from retrieval_metrics.cli import main

sys.exit(main(["import", *sys.argv[1:]]))
