"""Progress bars for long work, shown only to a person at a terminal.

On a terminal (stderr is a TTY and $CI is not set) `progress(...)` is a tqdm bar on stderr with counts, rate and
time left; in a pipe, a log file or CI it is a silent pass-through, and the commands print only their summary
line. This module imports nothing but tqdm, so scripts/benchmark.py can use it and stay a small parent process.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable
from types import TracebackType
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


class Stages:
    """A command's stages (the import's: parse, check, rank, write) as a progress bar on a terminal: the
    postfix names the stage running, on how many rows, and the rows per second of the stage before it; at the
    end, the whole command's rows and rows per second. Silent in a pipe or under CI (see progress())."""

    def __init__(self, names: list[str], desc: str) -> None:
        self.bar = progress(total=len(names), desc=desc, unit="stage")
        self.name: str | None = None
        self.rows: int | None = None
        self.started = self.first_started = time.perf_counter()
        self.last = ""  # "check: 10,000 rows at 1.2M rows/s"
        self.rows_read: dict[str, int] = {}

    def begin(self, name: str, rows: int | None = None) -> None:
        """End the current stage (if any) and start the next one, on `rows` rows when known. Beginning the
        stage already running goes on with it (the careful read of a run, after the one-pass read)."""
        if name == self.name:
            return
        self.end()
        self.name, self.rows, self.started = name, rows, time.perf_counter()
        running = name if rows is None else f"{name}: {rows:,} rows"
        self.bar.set_postfix_str(f"{running} | {self.last}" if self.last else running)

    def count(self, rows: int) -> None:
        """The rows the current stage read, once known: the judgments (parse) or the run (rank)."""
        self.rows = rows
        if self.name:
            self.rows_read[self.name] = rows

    def end(self) -> None:
        if self.name is None:
            return
        if self.rows is not None:
            self.last = f"{self.name}: {self.rows:,} rows at {per_second(self.rows, self.started)}"
        self.bar.update(1)
        self.name = None

    def __enter__(self) -> Stages:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if kind is None:
            self.end()
            total = sum(self.rows_read.values())
            self.bar.set_postfix_str(f"{total:,} rows at {per_second(total, self.first_started)}")
        else:
            self.bar.leave = False  # an error: clear the bar, the one-line message follows
        self.bar.close()


def per_second(rows: int, since: float) -> str:
    """'3.2M rows/s': rows over the seconds since `since`."""
    rate = rows / max(time.perf_counter() - since, 1e-9)
    return f"{tqdm.format_sizeof(rate, divisor=1000)} rows/s"
