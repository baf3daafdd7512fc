"""`python -m retrieval_metrics ...`: the same as the `retrieval-metrics` command."""

import sys

from retrieval_metrics.cli import main

sys.exit(main())
