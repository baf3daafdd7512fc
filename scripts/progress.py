"""Progress bars for long work, shown only to a person at a terminal.

On a terminal (stderr is a TTY and $CI is not set) `progress(...)` is a tqdm bar on stderr with counts, rate and
time left; in a pipe, a log file or CI it is a silent pass-through, and the scripts print only their summary
line. This module imports nothing but tqdm, so scripts/benchmark.py can use it and stay a small parent process.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any

from tqdm import tqdm


def interactive() -> bool:
    """Progress bars only for a person at a terminal: stderr is a TTY and $CI is not set (or "0"/"false")."""
    ci = os.environ.get("CI", "").strip().lower()
    return sys.stderr.isatty() and ci in {"", "0", "false", "no"}


def progress(iterable: Iterable[Any] | None = None, **kwargs: Any) -> tqdm:
    """tqdm(iterable, **kwargs) on stderr, disabled unless interactive()."""
    kwargs.setdefault("file", sys.stderr)
    try:
        columns = os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError):
        columns = 0
    if columns:
        kwargs.setdefault("dynamic_ncols", True)  # follows the window as it is resized
    else:
        # a terminal that reports no size (a bare pty) would otherwise get no bar at all
        kwargs.setdefault("ncols", 100)
        kwargs.setdefault("nrows", 24)
    return tqdm(iterable, disable=not interactive(), **kwargs)
