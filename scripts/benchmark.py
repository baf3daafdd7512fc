"""Benchmark the warehouse against other evaluators on a generated TREC collection: wall time and peak RSS.

    python scripts/benchmark.py [--questions 10000] [--docs-per-question 1000] [--seed 7] [--workdir DIR]
                                [--peers ours,pytrec_eval,ranx,duckdb_sql] [--baseline ours] [--markdown FILE]
                                [--rounds 1]

The collection (qrels.txt, run.txt) is generated once per (questions, docs per question, seed) under the work
directory and reused. Each peer then runs in child processes of this one, --rounds times, the peers
interleaved (round 1: every peer, then round 2, ...) so that a noisy neighbour slows them all alike: wall time
is perf_counter around the child (the median round is reported), peak RSS its ru_maxrss from os.wait4 (the
highest of the rounds). Peers:

  ours         `retrieval-metrics import` (python -m retrieval_metrics import), then dbt build --select
               source:raw+ (k = 1, 3, 10): everything the import changed, every mart and test. Two children,
               times added, RSS the max. Untimed first: the lesson's run (`retrieval-metrics rank`) and a full
               dbt build of the warehouse before the import (also dbt's parse cache)
  pytrec_eval  read both files into dicts in Python, RelevanceEvaluator(...).evaluate(run), means
  ranx         Qrels/Run.from_file(kind="trec"), ranx.evaluate (numba cache warmed first, untimed)
  duckdb_sql   plain DuckDB SQL over both files: P@10 and NDCG@10, a floor for what raw SQL costs

The parent stays small on purpose (no numpy or duckdb import here; generation runs in a child too): a child
started from a process that once held N MB reports ru_maxrss >= N, so a fat parent would inflate every peer.
(It imports tqdm, about 18 MB in all, far below any peer's own peak: ru_maxrss is a high-water mark.)
On a terminal a progress bar over the peers runs on stderr; in a pipe or under CI, one line per peer and round.
ranx needs `pip install -r requirements-bench.txt -c constraints.txt`; without it that peer is skipped.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import cast

from retrieval_metrics.progress import interactive, progress

REPO_ROOT = Path(__file__).resolve().parents[1]
PEERS = ("ours", "pytrec_eval", "ranx", "duckdb_sql")
TOLERANCE = 1e-9
JUDGED_FROM_RUN = 5  # judgment slots per question drawn from its ranking (duplicates dropped)
UNRETRIEVED_SPREAD = 1000  # judged-but-never-retrieved docs sit just past a question's retrieved docs

PYTREC_MEASURES = {"P.1,3,10", "recall.1,3,10", "ndcg_cut.1,3,10", "recip_rank", "map", "Rprec", "success.1,3,10"}
RANX_METRICS = {  # ranx name -> trec_eval name, so every peer reports the same keys
    "precision@1": "P_1", "precision@3": "P_3", "precision@10": "P_10",
    "recall@1": "recall_1", "recall@3": "recall_3", "recall@10": "recall_10",
    "ndcg@1": "ndcg_cut_1", "ndcg@3": "ndcg_cut_3", "ndcg@10": "ndcg_cut_10",
    "mrr": "recip_rank", "map": "map", "r-precision": "Rprec",
    "hit_rate@1": "success_1", "hit_rate@3": "success_3", "hit_rate@10": "success_10",
}  # fmt: skip
CHECKED = ("ndcg_cut_10", "P_10")  # the measures every peer reports and the agreement check compares


# --------------------------------------------------------------------------------------------- data


def generate(out_dir: Path, n_questions: int, docs_per_question: int, seed: int) -> tuple[Path, Path]:
    """Write a TREC qrels file and run file to out_dir; return (qrels, run) paths.

    Question q ranks docs start_q + j * step_q (j < docs_per_question, step 1..9: distinct per question).
    Scores are hundredths in [0, 10), so ties abound; lines are in trec_eval's order (score descending,
    docno descending) with ranks 1..n. Qrels: up to 5 docs drawn from the ranking with a bias to the top
    (grades 0..3), plus, for 40% of questions, one relevant doc the run never returned.
    """
    import duckdb
    import numpy as np

    rng = np.random.default_rng(seed)
    nq, nd = n_questions, docs_per_question
    q_width = max(5, len(str(nq - 1)))
    d_width = max(7, len(str(9 * nd + 2 * UNRETRIEVED_SPREAD)))
    step = rng.integers(1, 10, size=nq)
    start = rng.integers(0, 10**d_width - 9 * nd - UNRETRIEVED_SPREAD, size=nq)
    docs = start[:, None] + np.arange(nd)[None, :] * step[:, None]
    cents = rng.integers(0, 1000, size=(nq, nd))
    order = np.lexsort((-docs, -cents), axis=1)  # primary: score descending; then docno descending
    docs = np.take_along_axis(docs, order, axis=1)
    cents = np.take_along_axis(cents, order, axis=1)

    # Judged docs from the ranking: rank position nd * u^4 favours the top; duplicates dropped.
    positions = np.minimum((nd * rng.random((nq, JUDGED_FROM_RUN)) ** 4).astype(np.int64), nd - 1)
    keys, first = np.unique(np.arange(nq)[:, None] * nd + positions, return_index=True)
    grades = rng.choice(4, size=nq * JUDGED_FROM_RUN, p=[0.35, 0.3, 0.2, 0.15])[first]
    judged_q, judged_pos = keys // nd, keys % nd
    missed_q = np.flatnonzero(rng.random(nq) < 0.4)
    missed_doc = start[missed_q] + step[missed_q] * nd + rng.integers(0, UNRETRIEVED_SPREAD, size=missed_q.size)
    qrels = {
        "q": np.concatenate([judged_q, missed_q]),
        "d": np.concatenate([docs[judged_q, judged_pos], missed_doc]),
        "rel": np.concatenate([grades, rng.integers(1, 4, size=missed_q.size)]),
    }
    run = {
        "q": np.repeat(np.arange(nq), nd),
        "d": docs.ravel(),
        "rank": np.tile(np.arange(1, nd + 1), nq),
        "cents": cents.ravel(),
    }

    out_dir.mkdir(parents=True, exist_ok=True)
    qrels_path, run_path = out_dir / "qrels.txt", out_dir / "run.txt"
    qid, docno = f"printf('q%0{q_width}d', q)", f"printf('d%0{d_width}d', d)"
    options = "(format csv, delimiter ' ', header false, quote '')"
    with duckdb.connect() as con:
        con.execute("set enable_progress_bar = false")
        con.register("qrels_np", qrels)
        con.register("run_np", run)
        con.execute(f"copy (select {qid}, 0, {docno}, rel from qrels_np order by q, d) to '{qrels_path}' {options}")
        # No order by: DuckDB keeps the arrays' order (q, then rank).
        con.execute(
            f"copy (select {qid}, 'Q0', {docno}, rank, printf('%.2f', cents / 100), 'bench' from run_np)"
            f" to '{run_path}' {options}"
        )
    return qrels_path, run_path


# -------------------------------------------------------------------- peers (run in child processes)


def peer_pytrec_eval(qrels_path: Path, run_path: Path) -> dict[str, float]:
    import pytrec_eval

    qrels: dict[str, dict[str, int]] = {}
    with open(qrels_path) as f:
        for line in f:
            qid, _, docno, rel = line.split()
            qrels.setdefault(qid, {})[docno] = int(rel)
    run: dict[str, dict[str, float]] = {}
    with open(run_path) as f:
        for line in f:
            qid, _, docno, _, score, _ = line.split()
            run.setdefault(qid, {})[docno] = float(score)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES).evaluate(run)
    measures = next(iter(per_query.values())).keys()
    return {m: sum(values[m] for values in per_query.values()) / len(per_query) for m in measures}


def peer_ranx(qrels_path: Path, run_path: Path) -> dict[str, float]:
    import ranx

    qrels = ranx.Qrels.from_file(str(qrels_path), kind="trec")
    run = ranx.Run.from_file(str(run_path), kind="trec")
    scores = ranx.evaluate(qrels, run, list(RANX_METRICS))
    return {RANX_METRICS[name]: float(value) for name, value in scores.items()}


DUCKDB_SQL = """
with run as (
    select qid, docno, cast(score as float) as score  -- trec_eval holds scores as 32-bit floats
    from read_csv($run, delim = ' ', header = false, quote = '',
        columns = {'qid': 'varchar', 'q0': 'varchar', 'docno': 'varchar', 'rank': 'bigint', 'score': 'double',
                   'tag': 'varchar'})
),
qrels as (
    select qid, docno, rel
    from read_csv($qrels, delim = ' ', header = false, quote = '',
        columns = {'qid': 'varchar', 'iter': 'varchar', 'docno': 'varchar', 'rel': 'integer'})
),
questions as (select qid from run intersect select qid from qrels),  -- trec_eval scores only these
ranked as (
    select qid, docno, row_number() over (partition by qid order by score desc, docno desc) as rank from run
),
top10 as (
    select qid, count(*) as relevant, sum(rel / log2(rank + 1)) as dcg
    from ranked join qrels using (qid, docno)
    where rank <= 10 and rel > 0
    group by qid
),
ideal as (
    select qid, sum(rel / log2(i + 1)) as idcg
    from (select qid, rel, row_number() over (partition by qid order by rel desc) as i from qrels where rel > 0)
    where i <= 10
    group by qid
)
select
    avg(case when idcg > 0 then coalesce(dcg, 0) / idcg else 0 end) as ndcg_cut_10,
    avg(coalesce(relevant, 0) / 10) as P_10
from questions left join top10 using (qid) left join ideal using (qid)
"""


def peer_duckdb_sql(qrels_path: Path, run_path: Path) -> dict[str, float]:
    import duckdb

    with duckdb.connect() as con:
        con.execute("set enable_progress_bar = false")
        cursor = con.execute(DUCKDB_SQL, {"run": str(run_path), "qrels": str(qrels_path)})
        row = cursor.fetchone()
        assert row is not None
        return dict(zip([column[0] for column in cursor.description], row, strict=True))


def ours_metrics(db_path: Path) -> dict[str, float]:
    """The warehouse's run_metrics at k = 10 for the benchmark run (read after the timed build)."""
    import duckdb

    with duckdb.connect(str(db_path), read_only=True) as con:
        row = con.execute(
            "select ndcg, precision from run_metrics where collection_id = 'bench' and run_id = 'bench_run' and k = 10"
        ).fetchone()
    return {} if row is None else {"ndcg_cut_10": row[0], "P_10": row[1]}


CHILD_COMMANDS = {"pytrec_eval": peer_pytrec_eval, "ranx": peer_ranx, "duckdb_sql": peer_duckdb_sql}


def child_main(argv: list[str]) -> int:
    """`benchmark.py _peer NAME DATA_DIR`, `_generate DIR Q D SEED`, `_ours_metrics DB`: print JSON."""
    command, *args = argv
    result: object
    if command == "_peer":
        result = CHILD_COMMANDS[args[0]](Path(args[1]) / "qrels.txt", Path(args[1]) / "run.txt")
    elif command == "_generate":
        result = [str(p) for p in generate(Path(args[0]), int(args[1]), int(args[2]), int(args[3]))]
    else:
        result = ours_metrics(Path(args[0]))
    print(json.dumps(result))
    return 0


# ------------------------------------------------------------------------------ the parent: measuring


class PeerSkipped(Exception):
    pass


class PeerFailed(Exception):
    pass


@dataclass
class Result:
    peer: str
    seconds: float | None = None
    max_rss_kib: int | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    note: str = ""


def measure(cmd: list[str], log_dir: Path, label: str, env: dict[str, str] | None = None) -> tuple[float, int, str]:
    """Run one child to completion: (wall seconds, peak RSS KiB, stdout). Raises PeerFailed on exit != 0."""
    log_dir.mkdir(parents=True, exist_ok=True)
    out_path, err_path = log_dir / f"{label}.out", log_dir / f"{label}.err"
    with open(out_path, "w") as out, open(err_path, "w") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=REPO_ROOT)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        tail = (err_path.read_text().strip().splitlines() or out_path.read_text().strip().splitlines() or [""])[-1]
        raise PeerFailed(f"{label} exited {proc.returncode}: {tail[:160]} (log: {err_path})")
    return seconds, usage.ru_maxrss, out_path.read_text()


def self_command(*args: str) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), *args]


def last_json(stdout: str) -> dict[str, float]:
    """A peer child's result: the JSON object on its last stdout line."""
    return cast(dict[str, float], json.loads(stdout.strip().splitlines()[-1]))


def ensure_data(workdir: Path, n_questions: int, docs_per_question: int, seed: int) -> Path:
    """The collection's directory, generated (in a child) unless a complete one with these parameters exists."""
    data_dir = workdir / "data" / f"q{n_questions}_d{docs_per_question}_s{seed}"
    stamp = data_dir / "complete.json"
    params = {"questions": n_questions, "docs_per_question": docs_per_question, "seed": seed}
    if stamp.exists() and json.loads(stamp.read_text()) == params:
        return data_dir
    stamp.unlink(missing_ok=True)
    args = [str(data_dir), str(n_questions), str(docs_per_question), str(seed)]
    measure(self_command("_generate", *args), workdir / "logs", f"generate_{data_dir.name}")
    stamp.write_text(json.dumps(params))
    return data_dir


def run_child_peer(name: str, data_dir: Path, workdir: Path, env: dict[str, str] | None = None) -> Result:
    seconds, rss, stdout = measure(self_command("_peer", name, str(data_dir)), workdir / "logs", name, env)
    return Result(name, seconds, rss, last_json(stdout))


def run_ranx(data_dir: Path, workdir: Path) -> Result:
    if not has_package("ranx"):
        raise PeerSkipped("ranx not installed (pip install -r requirements-bench.txt -c constraints.txt)")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(workdir / "numba_cache")}
    warmup_dir = ensure_data(workdir, 20, 30, 1)  # untimed: compiles and caches ranx's numba functions
    measure(self_command("_peer", "ranx", str(warmup_dir)), workdir / "logs", "ranx_warmup", env)
    return run_child_peer("ranx", data_dir, workdir, env)


def run_ours(data_dir: Path, workdir: Path) -> Result:
    db_path = workdir / "bench.duckdb"
    for stale in (db_path, Path(f"{db_path}.wal")):
        stale.unlink(missing_ok=True)
    logs = workdir / "logs"
    # rank runs dbt too (the seeds it reads): its target and logs go where the builds below put theirs
    env = {**os.environ, "RETRIEVAL_DB": str(db_path), "DBT_TARGET_PATH": str(workdir / "dbt_target"),
           "DBT_LOG_PATH": str(logs / "dbt")}  # fmt: skip
    cli = [sys.executable, "-m", "retrieval_metrics"]
    rank_cmd = [*cli, "rank", "--retriever", "keyword_overlap"]
    measure(rank_cmd, logs, "ours_rank", env)  # untimed: dbt build needs the lesson's run
    import_cmd = [
        *cli, "import", "--collection", "bench", "--run-id", "bench_run",
        "--qrels", str(data_dir / "qrels.txt"), "--run", str(data_dir / "run.txt"),
    ]  # fmt: skip
    dbt_args = [
        "--project-dir", str(REPO_ROOT), "--profiles-dir", str(REPO_ROOT), "--vars", "{k_values: [1, 3, 10]}",
        "--target-path", str(workdir / "dbt_target"), "--log-path", str(logs / "dbt"),
    ]  # fmt: skip
    dbt = [str(Path(sys.executable).parent / "dbt"), "--no-use-colors"]
    # untimed: the warehouse as it stands before the import, built once (the lesson's run and seeds; this also
    # leaves dbt's parse cache, target/partial_parse.msgpack, that every later build reuses). Its time is
    # reported: it is dbt's own cost on a warehouse of 9 questions.
    before_cmd = [*dbt, "build", *dbt_args, "--exclude", "tag:lesson_golden"]
    before_seconds, _, _ = measure(before_cmd, logs, "ours_dbt_before", env)
    import_seconds, import_rss, _ = measure(import_cmd, logs, "ours_import", env)
    # timed: rebuild what the import changed, everything downstream of the raw tables (every model and mart,
    # with their tests); the unchanged seeds are not reloaded
    build_cmd = [*dbt, "build", *dbt_args, "--select", "source:raw+", "--exclude", "tag:lesson_golden"]
    build_seconds, build_rss, _ = measure(build_cmd, logs, "ours_dbt_build", env)
    _, _, stdout = measure(self_command("_ours_metrics", str(db_path)), logs, "ours_metrics")
    note = (
        f"import {import_seconds:.1f} s + dbt build -s source:raw+ {build_seconds:.1f} s"
        f" (a full dbt build of the 9-question lesson alone: {before_seconds:.1f} s)"
    )
    return Result("ours", import_seconds + build_seconds, max(import_rss, build_rss), last_json(stdout), note)


def median_run(runs: list[Result]) -> Result:
    """One peer's rounds as one result: the round with the median wall time (the lower middle one of an even
    number), with the highest peak RSS of all rounds and, when there were several, every round's time."""
    timed = sorted((r for r in runs if r.seconds is not None), key=lambda r: cast(float, r.seconds))
    if not timed:
        return runs[0]  # skipped or failed: its note says why
    middle = timed[(len(timed) - 1) // 2]
    rss = max(cast(int, r.max_rss_kib) for r in timed)
    note = middle.note
    if len(runs) > 1:
        rounds = ", ".join(f"{r.seconds:.2f}" if r.seconds is not None else "failed" for r in runs)
        note = "; ".join(filter(None, [note, f"median of {len(runs)} rounds: {rounds} s"]))
    return Result(middle.peer, middle.seconds, rss, middle.metrics, note)


def run_peer(name: str, data_dir: Path, workdir: Path) -> Result:
    try:
        if name == "ours":
            return run_ours(data_dir, workdir)
        if name == "ranx":
            return run_ranx(data_dir, workdir)
        return run_child_peer(name, data_dir, workdir)
    except PeerSkipped as exc:
        return Result(name, note=f"skipped: {exc}")
    except PeerFailed as exc:
        return Result(name, note=f"failed: {exc}")


# ----------------------------------------------------------------------------------------- reporting


def has_package(name: str) -> bool:
    try:
        metadata.version(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def version(name: str) -> str:
    return metadata.version(name) if has_package(name) else "not installed"


def table_rows(results: list[Result], baseline: str) -> list[list[str]]:
    base = next((r for r in results if r.peer == baseline and r.seconds is not None), None)
    rows = []
    for r in results:
        if r.seconds is None or r.max_rss_kib is None:
            rows.append([r.peer, "-", "-", "-", "-", r.note])
            continue
        time_ratio = f"{r.seconds / base.seconds:.2f}" if base and base.seconds else "-"
        rss_ratio = f"{r.max_rss_kib / base.max_rss_kib:.2f}" if base and base.max_rss_kib else "-"
        rows.append([r.peer, f"{r.seconds:.2f}", f"{r.max_rss_kib / 1024:.0f}", time_ratio, rss_ratio, r.note])
    return rows


def headers(baseline: str) -> list[str]:
    return ["peer", "wall s", "peak RSS MiB", f"time / {baseline}", f"RSS / {baseline}", "note"]


def text_table(results: list[Result], baseline: str) -> str:
    rows = [headers(baseline), *table_rows(results, baseline)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows)


def markdown_table(results: list[Result], baseline: str) -> str:
    lines = ["| " + " | ".join(headers(baseline)) + " |", "|---|" + "---:|" * 4 + "---|"]
    lines += ["| " + " | ".join(row) + " |" for row in table_rows(results, baseline)]
    return "\n".join(lines)


def agreement_lines(results: list[Result]) -> list[str]:
    """pytrec_eval is the reference; every other peer that ran is compared on CHECKED to TOLERANCE.

    ours and duckdb_sql must agree (same tie rule as trec_eval). ranx's difference is reported, not judged:
    it orders tied scores with an unstable argsort instead of trec_eval's docno descending.
    """
    by_peer = {r.peer: r.metrics for r in results if r.seconds is not None}
    reference = by_peer.get("pytrec_eval")
    if reference is None:
        return []
    lines = []
    for peer, metrics in by_peer.items():
        if peer == "pytrec_eval":
            continue
        diffs = {m: abs(metrics[m] - reference[m]) for m in CHECKED if m in metrics}
        values = ", ".join(f"{m} {reference[m]:.12f} vs {metrics[m]:.12f}" for m in diffs) or "no metrics"
        if diffs and max(diffs.values()) <= TOLERANCE:
            lines.append(f"check: pytrec_eval and {peer} agree to {TOLERANCE:g} ({values})")
        elif peer == "ranx" and diffs:
            lines.append(
                f"check: pytrec_eval and ranx differ by up to {max(diffs.values()):.1e}, as expected: ranx breaks"
                f" score ties its own way ({values})"
            )
        else:
            lines.append(f"check: pytrec_eval and {peer} DO NOT agree to {TOLERANCE:g} ({values})")
    return lines


def machine_info() -> list[str]:
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        cpuinfo = []
    cpu = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), "unknown")
    packages = ", ".join(f"{p} {version(p)}" for p in ("duckdb", "dbt-core", "pytrec-eval-terrier", "ranx", "numba"))
    return [
        f"date: {datetime.date.today().isoformat()}",
        f"machine: {os.cpu_count()} CPUs (nproc), {cpu}, {platform.system()} {platform.release()}",
        f"python {platform.python_version()}; {packages}",
    ]


def write_markdown(path: Path, args: argparse.Namespace, results: list[Result], checks: list[str]) -> None:
    rows = args.questions * args.docs_per_question
    text = [
        (
            f"Generated collection: {args.questions:,} questions x {args.docs_per_question:,} docs = {rows:,} run"
            f" lines (seed {args.seed}); {args.rounds} round(s) of every peer, interleaved: wall s is the"
            " median round, peak RSS the highest ru_maxrss of its process(es) in any round."
        ),
        "",
        markdown_table(results, args.baseline),
        "",
        *[f"- {line}" for line in machine_info() + checks],
    ]
    path.write_text("\n".join(text) + "\n")


def options(argv: list[str], parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser) -> argparse.Namespace:
    """The command line, checked: parser_class.error() gets anything wrong (`retrieval-metrics bench` checks
    its arguments here, with its one-line error, before it starts this script)."""
    parser = parser_class(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--docs-per-question", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/retrieval-metrics-bench"))
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated, run in this order")
    parser.add_argument("--baseline", default="ours", help="the peer the ratios divide by (default: ours)")
    parser.add_argument("--markdown", type=Path, help="also write the table and machine info to this file")
    parser.add_argument("--rounds", type=int, default=1, help="run every peer this many times, interleaved; "
                        "report each one's median wall time and its highest peak RSS (default: 1)")
    args = parser.parse_args(argv)
    args.peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    unknown = sorted(set(args.peers) - set(PEERS))
    if unknown or not args.peers or min(args.questions, args.docs_per_question, args.rounds) < 1:
        parser.error(f"--peers takes some of {','.join(PEERS)}; sizes and rounds must be >= 1 (unknown: {unknown})")
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] and argv[0] in {"_peer", "_generate", "_ours_metrics"}:
        return child_main(argv)
    args = options(argv)
    peers = args.peers
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(workdir / "logs", ignore_errors=True)

    rows = args.questions * args.docs_per_question
    print(f"benchmark: {args.questions} questions x {args.docs_per_question} docs = {rows} run lines, seed {args.seed}")
    try:
        data_dir = ensure_data(workdir, args.questions, args.docs_per_question, args.seed)
    except PeerFailed as exc:
        print(f"benchmark: error: could not generate the collection: {exc}", file=sys.stderr)
        return 2
    print(f"benchmark: data in {data_dir}")
    runs: dict[str, list[Result]] = {peer: [] for peer in peers}
    schedule = [(n, peer) for n in range(1, args.rounds + 1) for peer in peers]  # interleaved: noise hits all
    with progress(schedule, desc="benchmark", unit="peer") as bar:
        for n, peer in bar:
            bar.set_postfix_str(f"round {n}: {peer}")
            if not interactive():
                print(f"benchmark: round {n} of {args.rounds}: running {peer} ...", flush=True)
            runs[peer].append(run_peer(peer, data_dir, workdir))
    results = [median_run(peer_runs) for peer_runs in runs.values()]
    print()
    print(text_table(results, args.baseline))
    checks = agreement_lines(results)
    print("\n".join(checks))
    if args.markdown:
        write_markdown(args.markdown, args, results, checks)
        print(f"benchmark: wrote {args.markdown}")
    failed = any(r.note.startswith("failed") for r in results) or any("DO NOT" in line for line in checks)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
