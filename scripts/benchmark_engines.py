"""DuckDB and Spark side by side: the same build of a generated mid-size TREC collection on both engines.

    python scripts/benchmark_engines.py [--questions 1000] [--docs-per-question 100] [--seed 14] [--rounds 3]
                                        [--workdir DIR] [--markdown benchmarks/engines.md]

The collection (write_collection: three runs, with score ties, ties only as 32-bit floats, grades 0-3,
questions missing from a run, relevant docs never retrieved) is imported once, untimed, into a warehouse
(the Docent seeds load with the build). Then, in child processes, rounds of three peers, interleaved:

  duckdb        `retrieval-metrics build` on a fresh copy of the imported warehouse (no marts yet): the whole
                project on DuckDB, serving copy included
  spark         `retrieval-metrics build --target spark` with a fresh Spark directory: the raw tables written as
                Parquet, the JVM and the local Spark session started, the metastore created, then the whole
                project on Spark (the same models and tests)
  spark_startup the same command with `--select docs --indirect-selection cautious` (one seed of 8 rows and
                its own tests): what a Spark build costs before it computes anything

Every child's dbt has parsed the project once before the rounds (an untimed warm-up of each command), as a
user's repeated builds have. The wall time of each child is reported, the median of the rounds.
The test suite (tests/python/test_spark.py) builds the same collection on both engines and compares every row.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
PEERS = ("duckdb", "spark", "spark_startup")
RUN_QUALITY = {"keyword_overlap": 1.0, "better": 2.0, "worse": 0.3}  # how strongly a run's scores follow grades
# The collection's settings: every run compared with keyword_overlap, at the lesson's cutoffs k = 1, 2, 3 (a
# collection without its own has no baseline and k = 1, 3, 5, 10, 100)
MIDSIZE_SETTINGS = ["--set", "baseline_run_id=keyword_overlap", "--set", "k_values=1,2,3"]


def write_collection(
    folder: Path, n_questions: int = 1000, docs_per_question: int = 100, seed: int = 14
) -> tuple[Path, dict[str, Path]]:
    """A TREC qrels file and one run file per RUN_QUALITY entry, with the cases engines could disagree on:

    - question ids that look like numbers ("7", "07") and doc ids that sort differently as text and numbers;
    - grades 0-3, and judged docs no run retrieved;
    - each run skips about 3% of the questions; about 10% of its rankings are short (20 docs);
    - scores of four kinds, per doc: coarse (tenths: ties broken by docno), equal only as 32-bit floats
      (0.1, 0.1 + 1e-10), negative exponents, and plain doubles. Lines are shuffled: order means nothing.
    """
    import random

    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    pool = ["7", "07", "70", "700", "d.9", "D9"] + [f"d{n:05d}" for n in range(20 * docs_per_question)]
    question_ids = ["7", "07", "007"] + [f"q{n:04d}" for n in range(n_questions - 3)]
    candidates = {question_id: rng.sample(pool, docs_per_question) for question_id in question_ids}
    qrels: dict[str, dict[str, int]] = {}
    for question_id, docs in candidates.items():
        judged = rng.sample(docs, 6) + [doc for doc in rng.sample(pool, 4) if doc not in docs][:2]
        qrels[question_id] = {doc: rng.choices([0, 1, 2, 3], [0.4, 0.3, 0.2, 0.1])[0] for doc in judged}
    qrels_path = folder / "qrels.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, judged in qrels.items() for d, g in judged.items()))

    runs: dict[str, Path] = {}
    for run_id, quality in RUN_QUALITY.items():
        lines = []
        for question_id, docs in candidates.items():
            if rng.random() < 0.03:
                continue  # missing from this run
            for doc in docs[: 20 if rng.random() < 0.1 else docs_per_question]:
                signal = quality * qrels[question_id].get(doc, 0) + rng.gauss(0, 1.5)
                kind = rng.random()
                if kind < 0.35:
                    score = f"{round(signal, 1):.1f}"
                elif kind < 0.55:
                    score = repr(round(signal, 1) + rng.choice([0.0, 1e-10, -1e-10]))
                elif kind < 0.65:
                    score = f"{signal / 1000:.4e}"
                else:
                    score = repr(signal)
                lines.append(f"{question_id} Q0 {doc} 0 {score} {run_id}")
        rng.shuffle(lines)
        runs[run_id] = folder / f"{run_id}.txt"
        runs[run_id].write_text("\n".join(lines) + "\n")
    return qrels_path, runs


def cli(*args: str, env: dict[str, str]) -> float:
    """Run `retrieval-metrics ARGS`; its wall time in seconds (SystemExit with its output if it fails)."""
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "retrieval_metrics", *args], env=env, capture_output=True,
                            text=True, check=False)  # fmt: skip
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"retrieval-metrics {' '.join(args)} failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--docs-per-question", type=int, default=100)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/retrieval-metrics-engines"))
    parser.add_argument("--markdown", type=Path, help="write the results here too")
    args = parser.parse_args(argv)

    work = args.workdir.absolute()
    shutil.rmtree(work, ignore_errors=True)
    qrels, runs = write_collection(work / "collection", args.questions, args.docs_per_question, args.seed)
    imported = work / "imported.duckdb"
    base_env = {**os.environ, "DBT_TARGET_PATH": str(work / "dbt_target"), "DBT_LOG_PATH": str(work / "dbt_logs")}
    for position, (run_id, path) in enumerate(runs.items()):
        extra = ["--qrels", str(qrels)] if position == 0 else []
        cli("import", "--collection", "midsize", *extra, "--run", str(path), "--run-id", run_id,
            env={**base_env, "RETRIEVAL_DB": str(imported)})  # fmt: skip
    cli("settings", "--collection", "midsize", *MIDSIZE_SETTINGS, env={**base_env, "RETRIEVAL_DB": str(imported)})

    def fresh(name: str) -> dict[str, str]:
        """A fresh copy of the imported warehouse, its own Spark directory; the environment of its commands."""
        database = work / f"{name}.duckdb"
        for leftover in (database, database.with_suffix(".serving.duckdb"), database.with_suffix(".spark")):
            shutil.rmtree(leftover, ignore_errors=True) if leftover.is_dir() else leftover.unlink(missing_ok=True)
        shutil.copy(imported, database)
        serving = database.with_suffix(".serving.duckdb")
        return {**base_env, "RETRIEVAL_DB": str(database), "RETRIEVAL_SERVING_DB": str(serving)}

    spark = ["build", "--target", "spark"]
    commands = {"duckdb": ["build"], "spark": spark,
                "spark_startup": [*spark, "--select", "docs", "--indirect-selection", "cautious"]}  # fmt: skip
    for peer in PEERS:  # warm-up: dbt parses the project once per target
        cli(*commands[peer], env=fresh(peer))
    times: dict[str, list[float]] = {peer: [] for peer in PEERS}
    for round_number in range(1, args.rounds + 1):
        for peer in PEERS:
            times[peer].append(cli(*commands[peer], env=fresh(peer)))
            print(f"round {round_number}: {peer} {times[peer][-1]:.1f} s", file=sys.stderr)

    lines_count = sum(1 for path in runs.values() for _ in path.open())
    median = {peer: statistics.median(values) for peer, values in times.items()}
    table = ["| peer | wall time (median) | rounds | vs duckdb |", "|---|---:|---|---:|"] + [
        f"| {peer} | {median[peer]:.1f} s | {', '.join(f'{t:.1f}' for t in times[peer])} | "
        f"{median[peer] / median['duckdb']:.1f}x |" for peer in PEERS
    ]  # fmt: skip
    header = [
        f"# DuckDB and Spark: the whole build of a {args.questions:,} x {args.docs_per_question} collection",
        "",
        f"{datetime.date.today()}, `python scripts/benchmark_engines.py --rounds {args.rounds}`: {len(runs)} runs, "
        f"{lines_count:,} run lines, seed {args.seed}; {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}. Peers and method: the script's docstring.",
        "",
    ]
    text = "\n".join(header + table) + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
