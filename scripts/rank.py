"""Thin entry point: `python scripts/rank.py ARGS` is `retrieval-metrics rank ARGS`."""

import sys

from retrieval_metrics.cli import main

sys.exit(main(["rank", *sys.argv[1:]]))
