"""The serving copy: after a successful dbt build, the build database is published as serving.duckdb (or
$RETRIEVAL_SERVING_DB), which BI tools and notebooks read read-only.

DuckDB lets one process write a file or many read it, never both. Publishing checkpoints the build database
(no .wal left), copies it to a temporary file beside the serving copy, checks that the copy opens, and
os.replace()s it over the serving copy. The rename is atomic: a reader that has the old serving copy open
keeps reading that complete old version; a process that connects after the swap (with no connection to the
old copy still open: DuckDB shares one open database per file within a process) sees the new build; nobody
ever sees half a build. With $RETRIEVAL_SERVING_STORAGE_VERSION set (e.g. v1.0.0) the copy is written in that
DuckDB storage format instead (COPY FROM DATABASE), for BI tools whose DuckDB is older than 2.0.
"""

from __future__ import annotations

import os
import shutil
import stat
import uuid
from pathlib import Path

import duckdb

from retrieval_metrics.warehouse import connect, shown, sql_literal


def check_unlocked(build: Path) -> None:
    """Open the build database for writing and close it again: raises duckdb.IOException if a process holds it."""
    build.parent.mkdir(parents=True, exist_ok=True)
    with connect(build):
        pass


def publish(build: Path, serving: Path, storage_version: str | None = None) -> int:
    """Copy the checkpointed build database over the serving copy, atomically. Returns the serving copy's size.

    By default the copy is the build file byte for byte. With `storage_version` (e.g. "v1.0.0") it is written by
    DuckDB's COPY FROM DATABASE into a file of that storage format instead, for tools whose DuckDB is older than
    this project's (a file written by DuckDB 2.0 in its own format is readable only by DuckDB 2.0 or newer).
    """
    serving.parent.mkdir(parents=True, exist_ok=True)
    temporary = serving.parent / f".{serving.name}.{uuid.uuid4().hex[:12]}.tmp"
    try:
        # The write connection stays open during the copy: it holds DuckDB's lock, so no other process can
        # write the build file while it is read. After the checkpoint every change is in the file itself.
        with connect(build) as con:
            con.execute("force checkpoint")
            wal = Path(f"{build}.wal")
            if wal.exists() and wal.stat().st_size > 0:
                raise RuntimeError(f"{shown(wal)} is not empty after the checkpoint")
            if storage_version:
                source = con.execute("select current_database()").fetchone()[0]
                options = f"storage_version {sql_literal(storage_version)}"
                con.execute(f"attach {sql_literal(temporary)} as __serving_copy ({options})")
                con.execute(f'copy from database "{source}" to __serving_copy')
                con.execute("detach __serving_copy")  # checkpoints and closes the copy
            else:
                with open(build, "rb") as source_file, open(temporary, "xb") as out:
                    shutil.copyfileobj(source_file, out, 1 << 20)
                    out.flush()
                    os.fsync(out.fileno())
        os.chmod(temporary, stat.S_IMODE(os.stat(build).st_mode))
        with duckdb.connect(str(temporary), read_only=True) as copy:  # the copy opens and lists its tables
            copy.execute("select count(*) from duckdb_tables()").fetchone()
        Path(f"{temporary}.wal").unlink(missing_ok=True)
        Path(f"{serving}.wal").unlink(missing_ok=True)  # only a writer leaves one; it would belong to the old file
        size = os.path.getsize(temporary)
        os.replace(temporary, serving)
    except BaseException:
        temporary.unlink(missing_ok=True)
        Path(f"{temporary}.wal").unlink(missing_ok=True)
        raise
    directory = os.open(serving.parent, os.O_RDONLY)
    try:
        os.fsync(directory)  # the rename itself survives a crash
    finally:
        os.close(directory)
    return size
