"""The interactive commands side by side with dbt's own floor: what a user waits for between two questions.

    python scripts/benchmark_interactive.py [--rounds 5] [--workdir DIR] [--markdown benchmarks/interactive.md]

Scenarios, each a child process of this one, the rounds interleaved (round 1: every scenario, then round 2, ...)
so that a noisy neighbour slows them all alike; the median round is reported, with its ratio to the floor:

  dbt_floor      `dbt build` of a one-model dbt-duckdb project generated here (same Python, same dbt): what any
                 dbt command costs before it computes anything
  noop_build     `retrieval-metrics build` on the Docent warehouse as `make run` leaves it, nothing new: it
                 finds nothing to build and does not start dbt (docs/incremental.md#what-a-build-runs)
  forced_build   `retrieval-metrics build --force` on the same warehouse: the whole dbt build, every node
  notebook_loop  `rm.write_run` of a new 9-question Docent run, then `rm.build()`, in a new Python process (a
                 notebook's first build: dbt imported and the project parsed in it), on that warehouse as its
                 last build left it (restored untimed before each round, same path)
  notebook_next  the same in a Python process that has built once already (a notebook's next loop: dbt stays
                 loaded in the kernel); timed inside the process, around the second write_run + build
  rank           `retrieval-metrics rank --retriever bm25` on a fresh copy of that warehouse

Setup (untimed, once): the Docent warehouse (`rank --all`, then `build`), the notebook's warehouse (a copy,
built where the notebook reads it, then kept aside), and one warm-up of each scenario, so that every dbt
command has parsed its project once, as a user's repeated commands have. Each scenario keeps its own dbt
target directory. The node counts are read from run_results.json: of the forced build (every node) and of the
notebook's build (what reads the new run). Targets: noop_build and rank <= 1.5x the floor, forced_build and
notebook_loop <= 2x, notebook_next <= 1.2x.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ("dbt_floor", "noop_build", "forced_build", "notebook_loop", "notebook_next", "rank")
TARGETS = {"noop_build": 1.5, "forced_build": 2.0, "notebook_loop": 2.0, "notebook_next": 1.2, "rank": 1.5}
NOTEBOOK = """
import csv, sys
import retrieval_metrics as rm
seeds = sys.argv[1]
questions = [row["question_id"] for row in csv.DictReader(open(f"{seeds}/golden_questions.csv"))]
docs = [row["doc_id"] for row in csv.DictReader(open(f"{seeds}/docs.csv"))]
rows = [(q, d, float((i * 7 + j * 3) % 11)) for i, q in enumerate(questions) for j, d in enumerate(docs)]
rm.write_run("docent", "notebook_run", rows, database=sys.argv[2])
rm.build(database=sys.argv[2])
"""
NOTEBOOK_NEXT = NOTEBOOK + """
import time
started = time.perf_counter()
rm.write_run("docent", "notebook_next", rows[::-1], database=sys.argv[2])
rm.build(database=sys.argv[2])
print(f"timed: {time.perf_counter() - started}")
"""


def dbt_executable() -> str:
    return str(Path(sys.executable).with_name("dbt"))


def write_floor_project(folder: Path) -> None:
    """A one-model dbt-duckdb project: dbt's fixed cost, parse, connection, one table and the artifacts."""
    (folder / "models").mkdir(parents=True, exist_ok=True)
    (folder / "dbt_project.yml").write_text("name: floor\nversion: '1.0'\nprofile: floor\nmodel-paths: [models]\n")
    (folder / "profiles.yml").write_text(
        f"floor:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n      path: {folder / 'floor.duckdb'}\n"
    )
    (folder / "models" / "one.sql").write_text("select 1 as x\n")


class Bench:
    """The work directory, the environment of each scenario, and the commands."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.base = workdir / "docent" / "retrieval.duckdb"
        self.floor = workdir / "floor"

    def env(self, scenario: str, database: Path | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in {"RETRIEVAL_SERVING_DB", "DBT_TARGET"}}
        target = self.workdir / "targets" / scenario
        env.update(DBT_TARGET_PATH=str(target), DBT_LOG_PATH=str(target / "logs"), PYTHONHASHSEED="0")
        if database is not None:
            env["RETRIEVAL_DB"] = str(database)
        return env

    def copy_of_base(self, scenario: str) -> Path:
        """A fresh copy of the Docent warehouse (and its serving copy) for one round of a scenario."""
        folder = self.workdir / scenario
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for name in ("retrieval.duckdb", "serving.duckdb"):
            shutil.copy(self.base.with_name(name), folder / name)
        return folder / "retrieval.duckdb"

    def command(self, scenario: str) -> tuple[list[str], dict[str, str]]:
        cli = [sys.executable, "-m", "retrieval_metrics"]
        if scenario == "dbt_floor":
            args = ["build", "--project-dir", str(self.floor), "--profiles-dir", str(self.floor)]
            return [dbt_executable(), *args], self.env(scenario)
        if scenario in ("noop_build", "forced_build"):
            return [*cli, "build", *(["--force"] if scenario == "forced_build" else [])], self.env(scenario, self.base)
        if scenario == "notebook_loop":
            database = self.notebook_as_built()
            script = [sys.executable, "-c", NOTEBOOK, str(REPO_ROOT / "seeds"), str(database)]
            return script, self.env(scenario, database)
        if scenario == "notebook_next":
            database = self.copy_of_base(scenario)
            script = [sys.executable, "-c", NOTEBOOK_NEXT, str(REPO_ROOT / "seeds"), str(database)]
            return script, self.env(scenario, database)
        database = self.copy_of_base(scenario)
        return [*cli, "rank", "--retriever", "bm25"], self.env(scenario, database)

    def notebook_as_built(self) -> Path:
        """The notebook's warehouse and serving copy as its last build left them (times kept: they are in the
        build's record), at the path the notebook reads."""
        database = self.workdir / "notebook_loop" / "retrieval.duckdb"
        for name in ("retrieval.duckdb", "serving.duckdb"):
            shutil.copy2(self.workdir / "notebook_built" / name, database.with_name(name))
        return database

    def setup(self, say: Callable[[str], None]) -> None:
        write_floor_project(self.floor)
        self.base.parent.mkdir(parents=True, exist_ok=True)
        for args in (["rank", "--all"], ["build"]):
            say(f"setup: retrieval-metrics {' '.join(args)}")
            run([sys.executable, "-m", "retrieval_metrics", *args], self.env("setup", self.base))
        say("setup: the notebook's warehouse, built where it is read")
        database = self.copy_of_base("notebook_loop")
        run([sys.executable, "-m", "retrieval_metrics", "build"], self.env("notebook_loop", database))
        (self.workdir / "notebook_built").mkdir()
        for name in ("retrieval.duckdb", "serving.duckdb"):
            shutil.copy2(database.with_name(name), self.workdir / "notebook_built" / name)


def run(cmd: list[str], env: dict[str, str]) -> float:
    """Run one child to completion; its wall seconds, or those it timed itself (its last `timed: S` line). Exits
    with its output on failure."""
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd[:4])} ... exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    timed = [line for line in done.stdout.splitlines() if line.startswith("timed: ")]
    return float(timed[-1].split()[1]) if timed else seconds


def node_count(bench: Bench, scenario: str) -> dict[str, int]:
    """The nodes of the scenario's last dbt build, by resource type (from run_results.json)."""
    results = json.loads((bench.workdir / "targets" / scenario / "run_results.json").read_text())["results"]
    counts: dict[str, int] = {}
    for result in results:
        kind = result["unique_id"].split(".")[0]
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def markdown(times: dict[str, list[float]], nodes: dict[str, dict[str, int]], rounds: int) -> str:
    floor = statistics.median(times["dbt_floor"])
    lines = [
        f"# Interactive commands against dbt's floor ({datetime.date.today().isoformat()})",
        "",
        f"`python scripts/benchmark_interactive.py --rounds {rounds}` (`make bench`): median of {rounds} interleaved "
        f"rounds on {os.cpu_count()} cores, Python {platform.python_version()}. Ratio: the scenario's median over "
        "the floor's.",
        "",
        "| scenario | median s | min s | max s | x floor | target |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for scenario in SCENARIOS:
        values = times[scenario]
        median = statistics.median(values)
        target = f"<= {TARGETS[scenario]}x" if scenario in TARGETS else ""
        lines.append(f"| {scenario} | {median:.2f} | {min(values):.2f} | {max(values):.2f} | "
                     f"{median / floor:.2f} | {target} |")  # fmt: skip
    lines.append("")
    for scenario, counts in nodes.items():
        lines.append(f"- {scenario} ran {sum(counts.values())} nodes: "
                     + ", ".join(f"{n} {kind}s" for kind, n in sorted(counts.items())) + " (its run_results.json).")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workdir", type=Path, help="default: a temporary directory, removed after")
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-interactive-"))
    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    bench = Bench(workdir.absolute())
    try:
        bench.setup(say)
        for scenario in SCENARIOS:  # warm-up: each dbt target parses its project once
            run(*bench.command(scenario))
        times: dict[str, list[float]] = {scenario: [] for scenario in SCENARIOS}
        for round_number in range(1, args.rounds + 1):
            for scenario in SCENARIOS:
                cmd, env = bench.command(scenario)  # any copy is made here, untimed
                times[scenario].append(run(cmd, env))
                say(f"round {round_number} {scenario}: {times[scenario][-1]:.2f} s")
        nodes = {scenario: node_count(bench, scenario) for scenario in ("forced_build", "notebook_loop", "notebook_next")}
        table = markdown(times, nodes, args.rounds)
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    print(table, end="")
    if args.markdown:
        args.markdown.write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
