"""Writers queue: one import, rank, fuse, write_run or build at a time on a build database, the others waiting
their turn instead of failing.

The queue is an advisory lock (flock) on a file beside the database, `<database>.lock`, which also records who
holds it (PID, what it does, when it started) for the one line a waiting writer prints, and which the holder
removes when it is done. The kernel releases a flock when its holder exits, however it exits, so a writer
killed with `kill -9` leaves at most the file, which blocks nobody. Once it holds the queue, a writer also
waits for DuckDB's own lock on the file, which a process outside the queue can hold (`dbt build` run by hand,
a DuckDB shell, a BI tool pointed at the build database instead of the serving copy).

Within one process the queue is re-entrant: `import --build` and `rm.build()` take it once for everything
they write.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import duckdb

from retrieval_metrics.warehouse import LOCK_HOLDER, InputError, connect, database_error, process_command, shown

DEFAULT_WAIT = 600.0  # seconds a writer waits for its turn (--wait): 0 fails at once
POLL = 0.2  # seconds between two tries

_held: set[Path] = set()  # the databases whose queue this process holds


def lock_path(database: Path) -> Path:
    """The queue's lock file beside the database."""
    return database.with_name(database.name + ".lock")


def say_on_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@contextmanager
def queued_writer(
    database: Path, what: str, wait: float = DEFAULT_WAIT, say: Callable[[str], None] = say_on_stderr
) -> Iterator[None]:
    """Hold the database's writer queue while the block runs: wait up to `wait` seconds for the writer ahead
    (saying so once through `say`), then raise InputError, having written nothing."""
    database = database.absolute()
    if database in _held:
        yield
        return
    if wait < 0:
        raise InputError(f"--wait {wait:g}: the seconds to wait must be 0 or more")
    database.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait
    fd = take_turn(lock_path(database), database, deadline, wait, say)
    try:
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "what": what, "started_at": time.time()}).encode(), 0)
        wait_for_duckdb(database, deadline, wait, say)
        _held.add(database)
        try:
            yield
        finally:
            _held.discard(database)
    finally:
        lock_path(database).unlink(missing_ok=True)  # still ours: the next writer makes a new one
        os.close(fd)  # releases the flock


def take_turn(path: Path, database: Path, deadline: float, wait: float, say: Callable[[str], None]) -> int:
    """flock the queue file, polling until the deadline; its descriptor. The holder removes the file when it is
    done, so a lock won on a file no longer at `path` is let go, and the one there now tried."""
    said = False
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = describe_holder(fd)
            os.close(fd)
            if time.monotonic() >= deadline:
                raise InputError(
                    f"{shown(database)} is being written by {holder}; gave up after waiting {wait:g} s (--wait): "
                    "nothing was written, re-run when it ends"
                ) from None
            if not said:
                say(f"waiting for {holder} ... (up to {wait:g} s, --wait)")
                said = True
            time.sleep(POLL)
            continue
        try:
            current = os.stat(path).st_ino
        except FileNotFoundError:
            current = None
        if current == os.fstat(fd).st_ino:
            os.ftruncate(fd, 0)
            return fd
        os.close(fd)


def describe_holder(fd: int) -> str:
    """`PID n (import run x), started hh:mm:ss` from the queue file, as far as it says."""
    try:
        holder = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        holder = {}
    if not holder.get("pid"):
        return "another writer"
    started = datetime.fromtimestamp(holder.get("started_at", 0)).strftime("%H:%M:%S")
    return f"PID {holder['pid']} ({holder.get('what', 'a writer')}), started {started}"


def wait_for_duckdb(database: Path, deadline: float, wait: float, say: Callable[[str], None]) -> None:
    """Open the database for writing and close it again, until DuckDB's lock on it is free or the deadline."""
    if not database.exists():
        return
    said = False
    while True:
        try:
            with connect(database):
                return
        except duckdb.IOException as exc:
            match = LOCK_HOLDER.search(str(exc))
            if match is None:
                raise
            holder = f"PID {match['pid']} ({process_command(int(match['pid']), match['exe'])})"
            if time.monotonic() >= deadline:
                raise InputError(f"{database_error(database, exc)} (waited {wait:g} s, --wait)") from None
            if not said:
                say(f"waiting for {holder}, which holds {shown(database)} ... (up to {wait:g} s, --wait)")
                said = True
            time.sleep(POLL)
