"""Benchmark the warehouse against other evaluators on a generated TREC collection: wall time and peak RSS.

    python scripts/benchmark.py [--questions 10000] [--docs-per-question 1000] [--seed 7] [--workdir DIR]
                                [--peers ours,ours_11th,pytrec_eval,ranx,duckdb_sql] [--baseline ours]
                                [--markdown FILE] [--rounds 1] [--prior-runs 10]
    python scripts/benchmark.py --scenario trec [--questions 200] [--runs 6] [--docs-per-question 1000]
                                [--seed 7] [--workdir DIR] [--markdown FILE] [--rounds 1]

The collection (qrels.txt, run.txt) is generated once per (questions, docs per question, seed) under the work
directory and reused. Each peer then runs in child processes of this one, --rounds times, the peers
interleaved (round 1: every peer, then round 2, ...) so that a noisy neighbour slows them all alike: wall time
is perf_counter around the child (the median round is reported), peak RSS its ru_maxrss from os.wait4 (the
highest of the rounds). Peers:

  ours         `retrieval-metrics import --build` (k = 1, 3, 10) into an empty warehouse: one process reads the
               run and the qrels while dbt loads alongside, then builds everything (seeds included) and
               publishes the serving copy. Timed: that whole child. The note splits it as the command's last
               line does (import, dbt's load beside it, build, the rest: start-up and publishing) and adds
               dbt's fixed cost: the wall time of `retrieval-metrics build --select source:raw+` right after,
               with nothing to compute (untimed, once per benchmark, after its first round)
  ours_11th    the same command adding the 11th run (run11) to a warehouse holding ten runs of the collection
               (run01..run10, --prior-runs to change ten). That warehouse is built untimed, once, with
               `import --build` run after run, and cached in the work directory, keyed by the collection's
               parameters and a hash of the project (models, macros, seeds, tests, the package, the
               versions of duckdb and dbt), with the serving copy its last build published. Each round copies
               both files to the warehouse's path (fsync'd), as a user's warehouse stands after ten builds,
               and times the command on the copy (which publishes over that serving copy). Same split, dbt's fixed cost on the eleven-run
               warehouse, and the ratio to ours (the per-run models are incremental: the target is <= 1.1x).
               A default peer: its setup is paid once per project version, a round costs about what ours
               does. Skipped when the warehouse would hold more than 150M run lines (at 100M run lines a
               run, leave it out of --peers)
  pytrec_eval  read both files into dicts in Python, RelevanceEvaluator(...).evaluate(run), means
  ranx         Qrels/Run.from_file(kind="trec"), ranx.evaluate (numba cache warmed first, untimed)
  duckdb_sql   plain DuckDB SQL over both files: P@10 and NDCG@10, a floor for what raw SQL costs

dbt's files: every ours child (ours, ours_11th's copy, its setup) builds at one path, warehouse.duckdb in the
work directory, one at a time; the `import --build` children share one target directory (dbt_target), the
`build` children another (dbt_target_build), each parsed once, untimed, before the rounds, as its command
parses: every figure is a warm one, as a user's repeated commands are (dbt parses the whole project again
when the vars or the profile, the warehouse's path included, differ from the last parse in a directory).
Their RETRIEVAL_SERVING_DB is warehouse.serving.duckdb beside it (deleted after each round): never yours.

The parent stays small on purpose (no numpy or duckdb import here; generation runs in a child too): a child
started from a process that once held N MB reports ru_maxrss >= N, so a fat parent would inflate every peer.
(It imports tqdm, about 18 MB in all, far below any peer's own peak: ru_maxrss is a high-water mark.)
On a terminal a progress bar over the peers runs on stderr; in a pipe or under CI, one line per peer and round.
ranx needs `pip install -r requirements-bench.txt -c constraints.txt`; without it that peer is skipped.

--scenario trec: an IR lab's evaluation. Generated (untimed, cached in WORKDIR/trec/data): 200 topics, graded
qrels (0..3), and 7 runs of 1,000 docs per topic. Each round, interleaved, each step a child process:

  import_build     into an empty warehouse: `import` of the qrels with run01, `import` of run02..run06 (one
                   command per run), `settings --set baseline_run_id=run01`, `build`: every comparison with
                   the baseline (the paired tests of every measure). Its ratio to pytrec_eval (target <= 5x)
  seventh_run      `import --build` of run07 into a copy of the six-run warehouse the setup built
  settings_change  `settings --set relevance_level=2`, then `build`, on such a copy
  pytrec_eval      parse the qrels and the six runs, evaluate each: the measures the warehouse reports that
                   pytrec_eval has (read from measure_catalog and run_measures), at the same k values

Setup, untimed: one import_build (dbt parses both target directories; its warehouse kept as the six-run
warehouse) and one seventh_run. The agreement check compares run02's ndcg_cut_10, P_10 and map.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import re
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
PEERS = ("ours", "ours_11th", "pytrec_eval", "ranx", "duckdb_sql")
OURS = ("ours", "ours_11th")  # the peers that run the warehouse's own command
DBT_VARS = "{k_values: [1, 3, 10]}"
PRIOR_RUNS = 10  # ours_11th's warehouse holds this many runs before the timed one
MAX_11TH_LINES = 150_000_000  # ours_11th is skipped when its warehouse would hold more run lines than this
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


def ours_metrics(db_path: Path, run_id: str = "bench_run") -> dict[str, float]:
    """The warehouse's run_metrics at k = 10 for one run of the collection (read after the timed build)."""
    import duckdb

    with duckdb.connect(str(db_path), read_only=True) as con:
        row = con.execute(
            "select ndcg, precision from run_metrics where collection_id = 'bench' and run_id = ? and k = 10",
            [run_id],
        ).fetchone()
    return {} if row is None else {"ndcg_cut_10": row[0], "P_10": row[1]}


CHILD_COMMANDS = {"pytrec_eval": peer_pytrec_eval, "ranx": peer_ranx, "duckdb_sql": peer_duckdb_sql}


def child_main(argv: list[str]) -> int:
    """`benchmark.py _peer NAME DATA_DIR`, `_generate DIR Q D SEED`, `_ours_metrics DB [RUN_ID]`: print JSON."""
    command, *args = argv
    result: object
    if command == "_peer":
        result = CHILD_COMMANDS[args[0]](Path(args[1]) / "qrels.txt", Path(args[1]) / "run.txt")
    elif command == "_generate":
        result = [str(p) for p in generate(Path(args[0]), int(args[1]), int(args[2]), int(args[3]))]
    elif command == "_generate_trec":
        result = generate_trec(Path(args[0]), int(args[1]), int(args[2]), int(args[3]), int(args[4]))
    elif command == "_pytrec_trec":
        result = peer_pytrec_eval_trec(Path(args[0]), int(args[1]), args[2].split(" "))
    else:
        result = ours_metrics(Path(args[0]), *args[1:])
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
    # ours and ours_11th: the command's own split (import, load, build, other, serving_mib) and noop_build
    split: dict[str, float] = field(default_factory=dict)


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


# ------------------------------------------------------------------------- ours and ours_11th

CLI = [sys.executable, "-m", "retrieval_metrics"]
IMPORT_LINE = re.compile(
    r"import (?P<import>\d+(?:\.\d+)?) s, dbt loaded alongside in (?P<load>\d+(?:\.\d+)?) s,"
    r" then built in (?P<build>\d+(?:\.\d+)?) s"
)
PUBLISHED = re.compile(r"; published .* \((?P<mib>\d+(?:\.\d+)?) MiB\)")
PROJECT_FILES = ("dbt_project.yml", "profiles.yml", "packages.yml", "models", "macros", "seeds",
                 "tests", "retrieval_metrics")  # fmt: skip


def import_split(stdout: str) -> dict[str, float]:
    """The times on `import --build`'s last line (`retrieval-metrics import: ...; import I s, dbt loaded
    alongside in L s, then built in B s; published ... (M MiB) ...`): import, load, build, serving_mib. The
    import and the load run side by side; the build starts when both are done (max(I, L))."""
    lines = [line for line in stdout.splitlines() if line.startswith("retrieval-metrics import: ")]
    found = IMPORT_LINE.search(lines[-1]) if lines else None
    if found is None:
        raise PeerFailed(f"no `import ... s, dbt loaded alongside in ... s, then built in ... s` line in import --build's output: {lines[-1:]}")
    split = {name: float(found.group(name)) for name in ("import", "load", "build")}
    published = PUBLISHED.search(lines[-1])
    if published:
        split["serving_mib"] = float(published.group("mib"))
    return split


def project_fingerprint() -> str:
    """A hash of everything that shapes a warehouse built by the commands: the dbt project, the package and
    the versions of duckdb and dbt (read from files and metadata: nothing is imported)."""
    digest = hashlib.sha256()
    for package in ("duckdb", "dbt-core", "dbt-duckdb"):
        digest.update(f"{package} {version(package)}\n".encode())
    for name in PROJECT_FILES:
        top = REPO_ROOT / name
        files = sorted(top.rglob("*")) if top.is_dir() else [top]
        for path in files:
            relative = path.relative_to(REPO_ROOT)
            if not path.is_file() or "__pycache__" in relative.parts or relative.parts[:2] == ("tests", "python"):
                continue
            digest.update(f"{relative}\n".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def ours_env(workdir: Path, target: str = "dbt_target") -> dict[str, str]:
    """A command child's environment: the benchmark's warehouse, its serving copy beside it (never the user's
    RETRIEVAL_SERVING_DB; a plain byte copy), dbt's target directory and logs in the work directory."""
    env = {k: v for k, v in os.environ.items() if k != "RETRIEVAL_SERVING_STORAGE_VERSION"}
    db_path = warehouse_path(workdir)
    return {**env, "RETRIEVAL_DB": str(db_path), "RETRIEVAL_SERVING_DB": str(serving_of(db_path)),
            "DBT_PROJECT_DIR": str(REPO_ROOT), "DBT_TARGET_PATH": str(workdir / target),
            "DBT_LOG_PATH": str(workdir / "logs" / "dbt")}  # fmt: skip


def warehouse_path(workdir: Path) -> Path:
    """The one path every ours child builds at (ours' empty warehouse, ours_11th's copy, its setup): dbt's
    partial-parse cache holds for one profile, and the warehouse's path is part of the profile."""
    return workdir / "warehouse.duckdb"


def serving_of(db_path: Path) -> Path:
    return db_path.with_name(f"{db_path.stem}.serving.duckdb")


def remove_database(db_path: Path) -> None:
    for path in (db_path, Path(f"{db_path}.wal"), serving_of(db_path), Path(f"{serving_of(db_path)}.wal")):
        path.unlink(missing_ok=True)


def import_build_command(data_dir: Path, run_id: str, qrels: bool) -> list[str]:
    judgments = ["--qrels", str(data_dir / "qrels.txt")] if qrels else []
    return [*CLI, "import", "--collection", "bench", *judgments, "--run", str(data_dir / "run.txt"),
            "--run-id", run_id, "--build", "--vars", DBT_VARS]  # fmt: skip


@dataclass
class OursSetup:
    """What the ours peers share in one benchmark: the collection, the work directory, ours_11th's prior
    warehouse (or why there is none), and which peers have had their fixed cost measured."""

    data_dir: Path
    workdir: Path
    prior_runs: int = PRIOR_RUNS
    prior_warehouse: Path | None = None
    prior_error: str = ""
    fixed_cost_measured: set[str] = field(default_factory=set)

    @property
    def logs(self) -> Path:
        return self.workdir / "logs"

    @property
    def warehouse(self) -> Path:
        return warehouse_path(self.workdir)


# `import --build` loads dbt with a parse that leaves out the build's --vars (InProcessDbt.load in
# dbt_runner.py); the warm-up parse of its target directory has to match it, or the first round parses again.
LOAD_PARSE_ARGS: list[str] = []


def warm_dbt_targets(setup: OursSetup) -> None:
    """Untimed, once: dbt parses the project into both target directories, as the command there last parsed
    it (`import --build`: LOAD_PARSE_ARGS; `build`: its vars), so that every round finds a warm cache, as a
    user's repeated commands do. (After ours_11th's setup the import's directory is warm already.)"""
    dbt = Path(sys.executable).parent / "dbt"
    parse = [str(dbt) if dbt.exists() else "dbt", "--no-use-colors", "parse", "--project-dir", str(REPO_ROOT),
             "--profiles-dir", str(REPO_ROOT)]  # fmt: skip
    measure([*parse, *LOAD_PARSE_ARGS], setup.logs, "ours_parse_import_target", ours_env(setup.workdir))
    build_env = ours_env(setup.workdir, "dbt_target_build")
    measure([*parse, "--vars", DBT_VARS], setup.logs, "ours_parse_build_target", build_env)


def fixed_cost(setup: OursSetup, peer: str) -> float | None:
    """dbt's fixed cost, once per peer and benchmark: the wall time of `retrieval-metrics build --select
    source:raw+` on the warehouse just built, with nothing to compute (untimed)."""
    if peer in setup.fixed_cost_measured:
        return None
    setup.fixed_cost_measured.add(peer)
    command = [*CLI, "build", "--select", "source:raw+", "--vars", DBT_VARS]
    seconds, _, _ = measure(command, setup.logs, f"{peer}_noop_build", ours_env(setup.workdir, "dbt_target_build"))
    return seconds


def run_import_build(setup: OursSetup, peer: str, run_id: str, qrels: bool) -> Result:
    """Time `import --build` of the collection's run into the warehouse; then read its metrics, measure dbt's
    fixed cost (the first time) and drop the serving copy (disk: at 100M it is the size of the warehouse)."""
    command = import_build_command(setup.data_dir, run_id, qrels)
    seconds, rss, stdout = measure(command, setup.logs, peer, ours_env(setup.workdir))
    split = import_split(stdout)
    split["other"] = max(0.0, seconds - max(split["import"], split["load"]) - split["build"])
    metrics_command = self_command("_ours_metrics", str(setup.warehouse), run_id)
    _, _, metrics = measure(metrics_command, setup.logs, f"{peer}_metrics")
    noop = fixed_cost(setup, peer)
    if noop is not None:
        split["noop_build"] = noop
    serving_of(setup.warehouse).unlink(missing_ok=True)
    return Result(peer, seconds, rss, last_json(metrics), split=split)


def run_ours(setup: OursSetup) -> Result:
    """ours: the one command into an empty warehouse (no database, no serving copy, nothing built before)."""
    remove_database(setup.warehouse)
    return run_import_build(setup, "ours", "bench_run", qrels=True)


def prior_run_id(n: int) -> str:
    return f"run{n:02d}"


def prepare_prior_warehouse(setup: OursSetup, rows: int) -> None:
    """ours_11th's warehouse of `prior_runs` runs (run01, ...), built with `import --build` run after run
    (untimed), unless the cache holds one for this collection, this many runs and this project."""
    total = rows * (setup.prior_runs + 1)
    if total > MAX_11TH_LINES:
        setup.prior_error = (f"skipped: its warehouse would hold {total:,} run lines (> {MAX_11TH_LINES:,}); "
                             "run it at 10M")  # fmt: skip
        return
    key = {"collection": setup.data_dir.name, "prior_runs": setup.prior_runs, "vars": DBT_VARS,
           "project": project_fingerprint()}  # fmt: skip
    cache = setup.workdir / "ours_11th_cache"
    cached = cache / f"{setup.data_dir.name}_{setup.prior_runs}runs.duckdb"
    stamp = cached.with_suffix(".json")
    if cached.exists() and serving_of(cached).exists() and stamp.exists() and json.loads(stamp.read_text()) == key:
        setup.prior_warehouse = cached
        return
    stamp.unlink(missing_ok=True)
    cached.unlink(missing_ok=True)
    serving_of(cached).unlink(missing_ok=True)
    cache.mkdir(parents=True, exist_ok=True)
    remove_database(setup.warehouse)
    print(f"benchmark: ours_11th: building its warehouse of {setup.prior_runs} runs (untimed, cached in {cache})",
          flush=True)  # fmt: skip
    try:
        for n in range(1, setup.prior_runs + 1):
            command = import_build_command(setup.data_dir, prior_run_id(n), qrels=n == 1)
            measure(command, setup.logs, f"ours_11th_setup_{prior_run_id(n)}", ours_env(setup.workdir))
    except PeerFailed as exc:
        setup.prior_error = f"failed: its warehouse of {setup.prior_runs} runs: {exc}"
        return
    wal = Path(f"{setup.warehouse}.wal")
    if wal.exists() and wal.stat().st_size > 0:
        setup.prior_error = f"failed: {wal} is not empty after the last import --build (it published a copy)"
        return
    os.replace(setup.warehouse, cached)
    os.replace(serving_of(setup.warehouse), serving_of(cached))  # published by the last import --build
    remove_database(setup.warehouse)
    stamp.write_text(json.dumps(key))
    setup.prior_warehouse = cached


def copy_file(source: Path, target: Path) -> None:
    """A copy written through to disk (fsync), so that the timed child does not pay for its write-back."""
    with open(source, "rb") as src, open(target, "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)
        out.flush()
        os.fsync(out.fileno())


def run_ours_11th(setup: OursSetup) -> Result:
    """ours_11th: a fresh copy of the prior warehouse and of its serving copy (as a user's warehouse has them
    after ten builds), then the timed command adding run11."""
    if setup.prior_error:
        kind, reason = setup.prior_error.split(": ", 1)
        raise (PeerSkipped if kind == "skipped" else PeerFailed)(reason)
    assert setup.prior_warehouse is not None
    remove_database(setup.warehouse)
    copy_file(setup.prior_warehouse, setup.warehouse)
    copy_file(serving_of(setup.prior_warehouse), serving_of(setup.warehouse))
    result = run_import_build(setup, "ours_11th", prior_run_id(setup.prior_runs + 1), qrels=False)
    result.split["warehouse_mib"] = setup.prior_warehouse.stat().st_size / 2**20
    result.split["prior_runs"] = setup.prior_runs
    return result


def median_run(runs: list[Result]) -> Result:
    """One peer's rounds as one result: the round with the median wall time (the lower middle one of an even
    number), with the highest peak RSS of all rounds and, when there were several, every round's time.
    A figure measured in one round only (dbt's fixed cost) is carried over to it."""
    timed = sorted((r for r in runs if r.seconds is not None), key=lambda r: cast(float, r.seconds))
    if not timed:
        return runs[0]  # skipped or failed: its note says why
    middle = timed[(len(timed) - 1) // 2]
    rss = max(cast(int, r.max_rss_kib) for r in timed)
    split = {**{k: v for r in timed for k, v in r.split.items() if k == "noop_build"}, **middle.split}
    note = middle.note
    if len(runs) > 1:
        rounds = ", ".join(f"{r.seconds:.2f}" if r.seconds is not None else "failed" for r in runs)
        note = "; ".join(filter(None, [note, f"median of {len(runs)} rounds: {rounds} s"]))
    return Result(middle.peer, middle.seconds, rss, middle.metrics, note, split)


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def split_note(result: Result, ours: Result | None = None) -> str:
    """ours' and ours_11th's note: where the command's time went, dbt's fixed cost, ours_11th's ratio to ours."""
    split = result.split
    if not split or result.seconds is None:
        return ""
    publishing = f"publishing {split['serving_mib']:.0f} MiB" if "serving_mib" in split else "publishing"
    parts = [
        f"import {split['import']:.1f} s (dbt loaded alongside in {split['load']:.1f} s)",
        f"build {split['build']:.1f} s",
        f"the rest {split['other']:.1f} s (start-up, {publishing})",
    ]
    if "noop_build" in split:
        parts.append(f"a build with nothing to compute: {split['noop_build']:.1f} s")
    if "prior_runs" in split:
        runs = int(split["prior_runs"])
        parts.insert(0, f"run{runs + 1:02d} added to a copy of a warehouse of {plural(runs, 'run')}"
                        f" ({split['warehouse_mib']:.0f} MiB)")  # fmt: skip
        if ours is not None and ours.seconds:
            parts.append(f"{result.seconds / ours.seconds:.2f}x ours (target <= 1.1x)")
    return "; ".join(parts)


def run_peer(name: str, setup: OursSetup) -> Result:
    try:
        if name == "ours":
            return run_ours(setup)
        if name == "ours_11th":
            return run_ours_11th(setup)
        if name == "ranx":
            return run_ranx(setup.data_dir, setup.workdir)
        return run_child_peer(name, setup.data_dir, setup.workdir)
    except PeerSkipped as exc:
        return Result(name, note=f"skipped: {exc}")
    except PeerFailed as exc:
        return Result(name, note=f"failed: {exc}")


# ------------------------------------------------------------------ the TREC-style scenario (--scenario trec)

TREC_COLLECTION = "trec"
TREC_POOL = 2_500  # candidate docs per topic: every run ranks 1,000 of them
TREC_GRADES = [0.94, 0.03, 0.02, 0.01]  # each candidate's latent grade 0..3
TREC_JUDGED_NONRELEVANT = 150  # grade-0 judgments per topic besides the relevant docs
TREC_SCENARIOS = ("import_build", "seventh_run", "settings_change", "pytrec_eval")
TREC_SETTING = "relevance_level=2"  # the settings change: every measure that reads the binary cut recomputes
TREC_TARGET = 5.0  # import + build over pytrec_eval's parse + evaluate (issue 47)


def trec_run_id(n: int) -> str:
    return f"run{n:02d}"


def generate_trec(out_dir: Path, n_topics: int, n_runs: int, docs_per_run: int, seed: int) -> None:
    """Write qrels.txt (graded 0..3) and run01.txt .. runNN.txt: every run ranks docs_per_run of its topic's
    TREC_POOL candidates by its own noisy view of their latent grades (run n sees them more sharply as n
    grows), scores with four decimals (some ties), lines in trec_eval's order. Qrels: every candidate of
    grade >= 1 and TREC_JUDGED_NONRELEVANT of grade 0 per topic."""
    import numpy as np

    rng = np.random.default_rng(seed)
    grades = rng.choice(4, size=(n_topics, TREC_POOL), p=TREC_GRADES)
    docnos = np.array([[f"d{t:03d}{j:05d}" for j in range(TREC_POOL)] for t in range(n_topics)])
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = []
    for t in range(n_topics):
        nonrelevant = np.flatnonzero(grades[t] == 0)
        judged = np.sort(np.concatenate([np.flatnonzero(grades[t] > 0),
                                         rng.choice(nonrelevant, TREC_JUDGED_NONRELEVANT, replace=False)]))  # fmt: skip
        lines += [f"t{t:03d} 0 {docnos[t, j]} {grades[t, j]}" for j in judged]
    (out_dir / "qrels.txt").write_text("\n".join(lines) + "\n")
    for n in range(1, n_runs + 1):
        sharpness = 0.5 + 0.1 * n
        scores = np.round(sharpness * grades + rng.normal(0, 1, size=grades.shape), 4)
        lines = []
        for t in range(n_topics):
            order = np.lexsort((-np.arange(TREC_POOL), -scores[t]))[:docs_per_run]  # score desc, docno desc
            lines += [f"t{t:03d} Q0 {docnos[t, j]} {rank} {scores[t, j]:.4f} {trec_run_id(n)}"
                      for rank, j in enumerate(order, start=1)]  # fmt: skip
        (out_dir / f"{trec_run_id(n)}.txt").write_text("\n".join(lines) + "\n")


def peer_pytrec_eval_trec(data_dir: Path, runs: int, measures: list[str]) -> dict[str, dict[str, float]]:
    """pytrec_eval as an IR lab runs it: parse the qrels and each run file, evaluate every run; the means."""
    import pytrec_eval

    qrels: dict[str, dict[str, int]] = {}
    with open(data_dir / "qrels.txt") as f:
        for line in f:
            qid, _, docno, rel = line.split()
            qrels.setdefault(qid, {})[docno] = int(rel)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(measures))
    means = {}
    for n in range(1, runs + 1):
        run: dict[str, dict[str, float]] = {}
        with open(data_dir / f"{trec_run_id(n)}.txt") as f:
            for line in f:
                qid, _, docno, _, score, _ = line.split()
                run.setdefault(qid, {})[docno] = float(score)
        per_query = evaluator.evaluate(run)
        names = next(iter(per_query.values())).keys()
        means[trec_run_id(n)] = {m: sum(values[m] for values in per_query.values()) / len(per_query) for m in names}
    return means


def trec_reported_measures(db_path: Path) -> list[str]:
    """The measures the warehouse reports that pytrec_eval computes, as pytrec_eval takes them (P.1,3,10...):
    measure_catalog's trec_eval measures at the collection's k values."""
    import duckdb
    import pytrec_eval

    with duckdb.connect(str(db_path), read_only=True) as con:
        rows = con.execute(
            "select distinct catalog.measure, catalog.takes_cutoff, measures.k from run_measures as measures "
            "inner join measure_catalog as catalog using (measure) "
            "where catalog.reference = 'trec_eval' and measures.collection_id = ?",
            [TREC_COLLECTION],
        ).fetchall()
    cutoffs: dict[str, set[int]] = {}
    for measure, takes_cutoff, k in rows:
        family = "iprec_at_recall" if measure.startswith("iprec_at_recall") else measure
        if family in pytrec_eval.supported_measures:
            cutoffs.setdefault(family, set()).update([k] if takes_cutoff and k is not None else [])
    return sorted(f"{m}.{','.join(map(str, sorted(ks)))}" if ks else m for m, ks in cutoffs.items())


def trec_ours_metrics(db_path: Path, run_id: str) -> dict[str, float]:
    """The warehouse's trec_eval-named means of one run (run_measures), for the agreement check."""
    import duckdb

    with duckdb.connect(str(db_path), read_only=True) as con:
        rows = con.execute(
            "select measure_name, value from run_measures where collection_id = ? and run_id = ? "
            "and measure_name in ('ndcg_cut_10', 'P_10', 'map')",
            [TREC_COLLECTION, run_id],
        ).fetchall()
    return dict(rows)


class TrecBench:
    """The TREC-style scenario's files and commands: one warehouse path (dbt's parse cache holds for one
    profile), the six-run warehouse as the first scenario builds it (the start of the other two), and the
    pytrec_eval measures read from it."""

    def __init__(self, workdir: Path, args: argparse.Namespace) -> None:
        self.workdir, self.runs = workdir, args.runs
        self.sizes = [args.questions, args.runs + 1, args.docs_per_question, args.seed]  # what generate_trec takes
        self.data_dir = workdir / "data" / "t{}_r{}_d{}_s{}".format(*self.sizes)
        self.warehouse = warehouse_path(workdir)
        self.built = workdir / "built" / "warehouse.duckdb"
        self.measures: list[str] = []

    def cli(self, label: str, *args: str, target: str = "dbt_target_build") -> float:
        seconds, _, _ = measure([*CLI, *args], self.workdir / "logs", label, ours_env(self.workdir, target))
        return seconds

    def import_build(self) -> dict[str, float]:
        """A fresh warehouse: the qrels and the runs imported (one command each), the baseline set, built."""
        remove_database(self.warehouse)
        started = time.perf_counter()
        for n in range(1, self.runs + 1):
            qrels = ["--qrels", str(self.data_dir / "qrels.txt")] if n == 1 else []
            self.cli(f"trec_import_{trec_run_id(n)}", "import", "--collection", TREC_COLLECTION, *qrels,
                     "--run", str(self.data_dir / f"{trec_run_id(n)}.txt"), "--run-id", trec_run_id(n))  # fmt: skip
        imported = time.perf_counter()
        baseline = f"baseline_run_id={trec_run_id(1)}"
        self.cli("trec_settings", "settings", "--collection", TREC_COLLECTION, "--set", baseline)
        settled = time.perf_counter()
        self.cli("trec_build", "build")
        done = time.perf_counter()
        return {"seconds": done - started, "import": imported - started, "settings": settled - imported,
                "build": done - settled}  # fmt: skip

    def keep_built(self) -> None:
        self.built.parent.mkdir(parents=True, exist_ok=True)
        for source, target in ((self.warehouse, self.built), (serving_of(self.warehouse), serving_of(self.built))):
            copy_file(source, target)

    def from_built(self) -> None:
        remove_database(self.warehouse)
        copy_file(self.built, self.warehouse)
        copy_file(serving_of(self.built), serving_of(self.warehouse))

    def seventh_run(self) -> dict[str, float]:
        """`import --build` of one more run into a copy of the six-run warehouse."""
        self.from_built()
        run_id = trec_run_id(self.runs + 1)
        run = ["--run", str(self.data_dir / f"{run_id}.txt"), "--run-id", run_id]
        seconds = self.cli("trec_seventh_run", "import", "--collection", TREC_COLLECTION, *run, "--build", target="dbt_target")
        return {"seconds": seconds}

    def settings_change(self) -> dict[str, float]:
        """`settings --set TREC_SETTING`, then `build`, on a copy of the six-run warehouse."""
        self.from_built()
        settings = self.cli("trec_settings_change", "settings", "--collection", TREC_COLLECTION, "--set", TREC_SETTING)
        build = self.cli("trec_settings_build", "build")
        return {"seconds": settings + build, "settings": settings, "build": build}

    def pytrec_eval(self) -> dict[str, float]:
        command = self_command("_pytrec_trec", str(self.data_dir), str(self.runs), " ".join(self.measures))
        seconds, _, stdout = measure(command, self.workdir / "logs", "trec_pytrec_eval")
        self.pytrec_means = json.loads(stdout.strip().splitlines()[-1])
        return {"seconds": seconds}

    def setup(self) -> None:
        """Untimed: the collection written, one import + build (dbt parses its targets; the six-run warehouse
        kept), one 7th run (the import's target parsed), and the measures for pytrec_eval."""
        stamp = self.data_dir / "complete.json"
        if not stamp.exists():
            command = self_command("_generate_trec", str(self.data_dir), *map(str, self.sizes))
            measure(command, self.workdir / "logs", "trec_generate")
            stamp.write_text("{}")
        self.import_build()
        self.keep_built()
        self.measures = trec_reported_measures(self.warehouse)
        self.seventh_run()


TREC_CHECKED = ("ndcg_cut_10", "P_10", "map")


def trec_markdown(times: dict[str, list[dict[str, float]]], bench: TrecBench, args: argparse.Namespace,
                  checks: list[str]) -> str:  # fmt: skip
    def median(scenario: str) -> dict[str, float]:
        rounds = sorted(times[scenario], key=lambda r: r["seconds"])
        return rounds[(len(rounds) - 1) // 2]

    floor = median("pytrec_eval")["seconds"]
    lines = [
        f"TREC-style: {args.questions} topics x {bench.runs} runs x {args.docs_per_question:,} docs = "
        f"{args.questions * bench.runs * args.docs_per_question:,} run lines, graded qrels (seed {args.seed}), one "
        f"collection with {trec_run_id(1)} as its baseline: every comparison. `python scripts/benchmark.py "
        f"--scenario trec --rounds {args.rounds}`: {args.rounds} round(s), interleaved; the median round.",
        "",
        "| scenario | wall s | min s | max s | x pytrec_eval | target | split (median round) |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    labels = {
        "import_build": f"import ({bench.runs} runs) + baseline set + build, empty warehouse",
        "seventh_run": f"{trec_run_id(bench.runs + 1)} added: `import --build`",
        "settings_change": f"`settings --set {TREC_SETTING}` + build",
        "pytrec_eval": f"pytrec_eval: parse + evaluate the {bench.runs} runs",
    }
    for scenario in TREC_SCENARIOS:
        values = [r["seconds"] for r in times[scenario]]
        middle = median(scenario)
        split = ", ".join(f"{key} {value:.1f} s" for key, value in middle.items() if key != "seconds")
        target = f"<= {TREC_TARGET:g}x" if scenario == "import_build" else ""
        lines.append(f"| {labels[scenario]} | {middle['seconds']:.2f} | {min(values):.2f} | {max(values):.2f} | "
                     f"{middle['seconds'] / floor:.2f} | {target} | {split} |")  # fmt: skip
    lines += ["", f"- pytrec_eval's measures (those of the warehouse it has): {' '.join(bench.measures)}"]
    lines += [f"- {line}" for line in machine_info() + checks]
    return "\n".join(lines) + "\n"


def trec_main(args: argparse.Namespace) -> int:
    """--scenario trec: the rounds of TREC_SCENARIOS, interleaved, then the table and the agreement check."""
    workdir = args.workdir.resolve() / "trec"
    shutil.rmtree(workdir / "logs", ignore_errors=True)
    bench = TrecBench(workdir, args)
    sizes = f"{args.questions} topics x {args.runs} runs x {args.docs_per_question} docs"
    print(f"benchmark: TREC-style, {sizes}; setup (untimed)", flush=True)
    try:
        bench.setup()
        ours = trec_ours_metrics(bench.built, trec_run_id(2))
        times: dict[str, list[dict[str, float]]] = {scenario: [] for scenario in TREC_SCENARIOS}
        for n in range(1, args.rounds + 1):
            for scenario in TREC_SCENARIOS:
                times[scenario].append(getattr(bench, scenario)())
                print(f"benchmark: round {n} {scenario}: {times[scenario][-1]['seconds']:.2f} s", flush=True)
    except PeerFailed as exc:
        print(f"benchmark: error: {exc}", file=sys.stderr)
        return 1
    reference = bench.pytrec_means[trec_run_id(2)]
    diffs = {m: abs(ours[m] - reference[m]) for m in TREC_CHECKED if m in ours and m in reference}
    values = ", ".join(f"{m} {reference[m]:.12f} vs {ours[m]:.12f}" for m in diffs)
    agree = len(diffs) == len(TREC_CHECKED) and max(diffs.values()) <= TOLERANCE
    checks = [f"check: pytrec_eval and ours {'agree' if agree else 'DO NOT agree'} to {TOLERANCE:g} on "
              f"{trec_run_id(2)} ({values})"]  # fmt: skip
    table = trec_markdown(times, bench, args, checks)
    print(table, end="")
    if args.markdown:
        args.markdown.write_text(table)
        print(f"benchmark: wrote {args.markdown}")
    return 0 if agree else 1


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


def split_table(results: list[Result]) -> str:
    """Markdown: where the command's time went, for ours and ours_11th (the rounds' median)."""
    rows = [r for r in results if r.split and r.seconds is not None]
    if not rows:
        return ""
    lines = [
        "| scenario | wall s | import s | dbt load s (beside the import) | build s | the rest s (start-up, publishing)"
        " | a build with nothing to compute s |",
        "|---|" + "---:|" * 6,
    ]
    for r in rows:
        s = r.split
        runs = int(s.get("prior_runs", 0))
        scenario = f"ours_11th: run{runs + 1:02d} added to {plural(runs, 'run')}" if runs else "ours: empty warehouse"
        noop = f"{s['noop_build']:.1f}" if "noop_build" in s else "-"
        cells = [scenario, f"{r.seconds:.1f}", *(f"{s[k]:.1f}" for k in ("import", "load", "build", "other")), noop]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_markdown(path: Path, args: argparse.Namespace, results: list[Result], checks: list[str]) -> None:
    rows = args.questions * args.docs_per_question
    split = split_table(results)
    text = [
        (
            f"Generated collection: {args.questions:,} questions x {args.docs_per_question:,} docs = {rows:,} run"
            f" lines (seed {args.seed}); {args.rounds} round(s) of every peer, interleaved: wall s is the"
            " median round, peak RSS the highest ru_maxrss of its process(es) in any round."
        ),
        "",
        markdown_table(results, args.baseline),
        "",
        *([split, ""] if split else []),
        *[f"- {line}" for line in machine_info() + checks],
    ]
    path.write_text("\n".join(text) + "\n")


def options(argv: list[str], parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser) -> argparse.Namespace:
    """The command line, checked: parser_class.error() gets anything wrong (`retrieval-metrics bench` checks
    its arguments here, with its one-line error, before it starts this script)."""
    parser = parser_class(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", choices=("10m", "trec"), default="10m", help="10m: the peers on one "
                        "generated run (the default); trec: the TREC-style scenario, runs with a baseline (see below)")
    parser.add_argument("--questions", type=int, help="default: 10,000 (10m), 200 topics (trec)")
    parser.add_argument("--runs", type=int, default=6, help="trec: the runs of the collection (default: 6)")
    parser.add_argument("--docs-per-question", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/retrieval-metrics-bench"))
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated, run in this order")
    parser.add_argument("--baseline", default="ours", help="the peer the ratios divide by (default: ours)")
    parser.add_argument("--markdown", type=Path, help="also write the table and machine info to this file")
    parser.add_argument("--rounds", type=int, default=1, help="run every peer this many times, interleaved; "
                        "report each one's median wall time and its highest peak RSS (default: 1)")
    parser.add_argument("--prior-runs", type=int, default=PRIOR_RUNS, help="the runs ours_11th's warehouse "
                        f"holds before the timed one (default: {PRIOR_RUNS})")
    args = parser.parse_args(argv)
    if args.questions is None:
        args.questions = 200 if args.scenario == "trec" else 10_000
    args.peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    unknown = sorted(set(args.peers) - set(PEERS))
    sizes = (args.questions, args.docs_per_question, args.rounds, args.prior_runs, args.runs)
    if unknown or not args.peers or min(sizes) < 1:
        parser.error(f"--peers takes some of {','.join(PEERS)}; sizes, rounds and prior runs must be >= 1"
                     f" (unknown: {unknown})")
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] and argv[0] in {"_peer", "_generate", "_ours_metrics", "_generate_trec", "_pytrec_trec"}:
        return child_main(argv)
    args = options(argv)
    if args.scenario == "trec":
        return trec_main(args)
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
    setup = OursSetup(data_dir, workdir, args.prior_runs)
    if "ours_11th" in peers:
        prepare_prior_warehouse(setup, rows)
    if any(peer in OURS for peer in peers):
        try:
            warm_dbt_targets(setup)
        except PeerFailed as exc:  # the commands below will say what is wrong
            print(f"benchmark: warning: dbt parse failed: {exc}", file=sys.stderr)
    runs: dict[str, list[Result]] = {peer: [] for peer in peers}
    schedule = [(n, peer) for n in range(1, args.rounds + 1) for peer in peers]  # interleaved: noise hits all
    with progress(schedule, desc="benchmark", unit="peer") as bar:
        for n, peer in bar:
            bar.set_postfix_str(f"round {n}: {peer}")
            if not interactive():
                print(f"benchmark: round {n} of {args.rounds}: running {peer} ...", flush=True)
            runs[peer].append(run_peer(peer, setup))
    results = [median_run(peer_runs) for peer_runs in runs.values()]
    ours = next((r for r in results if r.peer == "ours" and r.seconds is not None), None)
    for result in results:
        result.note = "; ".join(filter(None, [split_note(result, ours), result.note]))
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
