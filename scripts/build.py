"""dbt build on the build database, then, only if it succeeded, publish the serving copy that BI tools read.

    python scripts/build.py [dbt build arguments ...]      # e.g. --select run_metrics+  or  --vars '{...}'
    make build [DBT_ARGS="..."]                              # the same, and a step of `make run`

The build database is $RETRIEVAL_DB (default retrieval.duckdb in the repo root); the serving copy is
$RETRIEVAL_SERVING_DB (default serving.duckdb next to the build database). Steps:

1. Check that nobody holds the build database: DuckDB lets one process write a file or many read it, never
   both. If a notebook or BI tool has it open, stop with one line naming that process and what to do.
2. dbt build --project-dir REPO --profiles-dir REPO [your arguments]: its output as usual. On failure, exit
   with dbt's code and leave the serving copy exactly as it was.
3. Publish: checkpoint the build database (no .wal left), copy it to a temporary file beside the serving copy,
   check that the copy opens, and os.replace() it over the serving copy. The rename is atomic: a reader that
   has the old serving copy open keeps reading that complete old version; a process that connects after the
   swap (with no connection to the old copy still open: DuckDB shares one open database per file within a
   process) sees the new build; nobody ever sees half a build. With $RETRIEVAL_SERVING_STORAGE_VERSION set (e.g.
   v1.0.0) the copy is written in that DuckDB storage format instead (COPY FROM DATABASE), for BI tools whose
   DuckDB is older than 2.0: by default the copy is byte for byte, in DuckDB 2.0's own format.

BI tools and notebooks open the serving copy read-only, so they never block a build and a build never
breaks them.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import duckdb

from warehouse import REPO_ROOT, connect, database_error, database_path, serving_path, shown

SCRIPT = "build.py"


def dbt_command(args: list[str]) -> list[str]:
    """dbt from this interpreter's environment (the venv), else from PATH."""
    beside = Path(sys.executable).parent / "dbt"
    dbt = str(beside) if beside.exists() else shutil.which("dbt") or "dbt"
    project = ["--project-dir", str(REPO_ROOT), "--profiles-dir", str(REPO_ROOT)]
    return [dbt, "--no-use-colors", "build", *project, *args]


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
                options = f"storage_version '{sql_quote(storage_version)}'"
                con.execute(f"attach '{sql_quote(temporary)}' as __serving_copy ({options})")
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


def sql_quote(value: object) -> str:
    return str(value).replace("'", "''")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    build = database_path().absolute()
    serving = serving_path(build).absolute()
    if serving == build:
        print(f"{SCRIPT}: error: the serving copy and the build database are the same file {shown(build)}: "
              "set RETRIEVAL_SERVING_DB to another path", file=sys.stderr)  # fmt: skip
        return 2
    try:
        check_unlocked(build)
    except duckdb.IOException as exc:
        print(database_error(SCRIPT, build, exc), file=sys.stderr)
        return 2
    # dbt reads the same absolute path, whatever directory this runs from
    code = subprocess.call(dbt_command(args), env={**os.environ, "RETRIEVAL_DB": str(build)})
    if code != 0:
        try:
            check_unlocked(build)  # a reader that opened the file while dbt ran: say so in one line
            reason = f"dbt build failed (exit {code})"
        except duckdb.IOException as exc:
            reason = database_error(SCRIPT, build, exc).removeprefix(f"{SCRIPT}: error: ")
        print(f"{SCRIPT}: error: {reason}; {shown(serving)} left as it was", file=sys.stderr)
        return code
    try:
        size = publish(build, serving, os.environ.get("RETRIEVAL_SERVING_STORAGE_VERSION") or None)
    except duckdb.IOException as exc:
        print(database_error(SCRIPT, build, exc), file=sys.stderr)
        return 2
    except (OSError, RuntimeError, duckdb.Error) as exc:
        print(f"{SCRIPT}: error: could not publish {shown(serving)}: {str(exc).splitlines()[0]}; "
              "it was left as it was", file=sys.stderr)  # fmt: skip
        return 2
    print(f"{SCRIPT}: published {shown(serving)} ({size / 2**20:.1f} MiB), a copy of {shown(build)}; "
          "BI tools and notebooks read it read-only")  # fmt: skip
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print(f"{SCRIPT}: interrupted; the serving copy was left as it was", file=sys.stderr)
        sys.exit(130)
