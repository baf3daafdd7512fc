"""Judging pools (docs/judging.md): `retrieval-metrics pool` lists exactly the unjudged (question, document) pairs
of the chosen runs' top K, ordered within each question as each method documents it, with each run's Judged@K
now and once the queue is judged; export writes the queue for a labelling tool; bad pools are refused whole."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

import duckdb
import pytest

from conftest import Warehouse, warehouse_checksums
from test_trec_agreement import make_collection

pytestmark = pytest.mark.dbt

POOLED = ["run0", "run2"]
DEPTH = 5


@pytest.fixture(scope="module")
def generated(lesson: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    """The lesson plus a generated collection `gen` of three runs whose tops hold many unjudged documents."""
    folder = tmp_path_factory.mktemp("pool")
    qrels, runs = make_collection(random.Random(5), folder / "collection", n_runs=3)
    warehouse = lesson.copy(folder / "warehouse")
    for number, run in enumerate(runs):
        qrels_args = ["--qrels", str(qrels)] if number == 0 else []
        imported = warehouse.cli("import", "--collection", "gen", *qrels_args, "--run", str(run),
                                 "--run-id", f"run{number}")  # fmt: skip
        assert imported.returncode == 0, imported.stderr
    return warehouse


def expected_queue(warehouse: Warehouse, method: str, persistence: float = 0.9) -> list[tuple[object, ...]]:
    """The queue computed directly from the raw rows: (question, position, doc, priority, best rank, runs, by)."""
    judged = set(warehouse.rows("select question_id, doc_id from raw.qrels where collection_id = 'gen'"))
    rankings = warehouse.rows(
        "select run_id, question_id, doc_id, rank from raw.rankings "
        "where collection_id = 'gen' and list_contains(?, run_id) and rank <= ?",
        [POOLED, DEPTH],
    )
    found: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
    for run_id, question_id, doc_id, rank in rankings:
        if (question_id, doc_id) not in judged:
            found[question_id, doc_id].append((rank, run_id))
    by_question: dict[str, list[tuple[object, ...]]] = defaultdict(list)
    for (question_id, doc_id), hits in found.items():
        hits.sort()
        best = hits[0][0]
        rrf = sum(1.0 / (60 + rank) for rank, _ in hits)
        rbp = sum((1 - persistence) * persistence ** (rank - 1) for rank, _ in hits)
        if method == "depth":
            priority, key = float(best), (best, -len(hits), best, doc_id)
        else:
            priority = rrf if method == "rrf" else rbp
            key = (-priority, best, doc_id)  # type: ignore[assignment]
        by = ", ".join(f"{run_id}@{rank}" for rank, run_id in hits)
        by_question[question_id].append((key, doc_id, priority, best, len(hits), by))
    queue = []
    for question_id, items in by_question.items():
        for position, (_, doc_id, priority, best, n_runs, by) in enumerate(sorted(items), start=1):
            queue.append((question_id, position, doc_id, priority, best, n_runs, by))
    return sorted(queue)


def built_queue(warehouse: Warehouse) -> list[tuple[object, ...]]:
    return warehouse.rows(
        "select question_id, queue_position, doc_id, priority, best_rank, n_pool_runs, retrieved_by "
        "from judging_queue where collection_id = 'gen' order by all"
    )


def test_each_method_queues_exactly_the_unjudged_pairs_of_the_pooled_tops(generated: Warehouse) -> None:
    for method in ("depth", "rrf", "rbp"):
        result = generated.cli("pool", "--collection", "gen", "--runs", ",".join(POOLED), "--depth", str(DEPTH),
                               "--method", method)  # fmt: skip
        assert result.returncode == 0, result.stderr
        want, got = expected_queue(generated, method), built_queue(generated)
        assert len(got) == len(want) > 50, method
        for built, expected in zip(got, want, strict=True):
            assert built[:3] == expected[:3] and built[4:] == expected[4:], (method, built, expected)
            assert built[3] == pytest.approx(expected[3], rel=1e-12), (method, built, expected)
        assert f"pooled the top {DEPTH} of run0, run2 by {method}" in result.stdout
        assert f"{len(want)} (question, document) pairs to judge" in result.stdout
    assert generated.rows("select count(*) from judging_queue where collection_id = 'docent'") == [(0,)]


def test_judged_at_depth_now_and_after_equal_a_direct_count(generated: Warehouse) -> None:
    assert generated.cli("pool", "--collection", "gen", "--runs", ",".join(POOLED), "--depth", str(DEPTH)
                         ).returncode == 0  # fmt: skip
    judged = set(generated.rows("select question_id, doc_id from raw.qrels where collection_id = 'gen'"))
    queued = set(generated.rows("select question_id, doc_id from judging_queue where collection_id = 'gen'"))
    tops: dict[tuple[str, str], list[str]] = defaultdict(list)
    for run_id, question_id, doc_id in generated.rows(
        "select run_id, question_id, doc_id from raw.rankings where collection_id = 'gen' and rank <= ? "
        "order by run_id, question_id, rank", [DEPTH]
    ):
        tops[run_id, question_id].append(doc_id)
    coverage = {row[0]: row[1:] for row in generated.rows(
        "select run_id, is_pool_run, n_questions, judged_now, judged_after, n_unjudged_now, n_unjudged_after "
        "from judging_pool_coverage where collection_id = 'gen'")}  # fmt: skip
    assert sorted(coverage) == ["run0", "run1", "run2"]
    for run_id, (pooled, n_questions, now, after, unjudged_now, unjudged_after) in coverage.items():
        questions = [docs for (run, _), docs in tops.items() if run == run_id]
        now_shares = [sum((q, d) in judged for d in docs) / len(docs) for (run, q), docs in tops.items() if run == run_id]
        after_shares = [sum((q, d) in judged or (q, d) in queued for d in docs) / len(docs)
                        for (run, q), docs in tops.items() if run == run_id]  # fmt: skip
        assert (pooled, n_questions) == (run_id in POOLED, len(questions))
        assert now == pytest.approx(sum(now_shares) / len(now_shares), rel=1e-12)
        assert after == pytest.approx(sum(after_shares) / len(after_shares), rel=1e-12)
        unjudged = sum(1 for (run, q), docs in tops.items() if run == run_id for d in docs if (q, d) not in judged)
        assert unjudged_now == unjudged > 0
        if run_id in POOLED:
            assert (after, unjudged_after) == (1.0, 0)
        else:
            assert now <= after < 1.0 and 0 < unjudged_after < unjudged_now


def test_export_writes_the_queue_for_a_labelling_tool(generated: Warehouse, tmp_path: Path) -> None:
    assert generated.cli("pool", "--collection", "gen", "--all", "--depth", "3", "--method", "rrf").returncode == 0
    out = tmp_path / "queue"
    for file_format in ("csv", "jsonl"):
        result = generated.cli("export", "--format", file_format, "--table", "judging_queue", "--collection", "gen",
                               "--out", str(out), "--db", str(generated.db_path))  # fmt: skip
        assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in out.iterdir()) == ["judging_queue.csv", "judging_queue.jsonl"]
    want = generated.rows("select * from judging_queue where collection_id = 'gen' order by all")
    lines = (out / "judging_queue.jsonl").read_text().splitlines()
    assert [tuple(json.loads(line).values()) for line in lines] == want
    with duckdb.connect() as con:
        rows = con.execute(f"select * from read_csv('{out / 'judging_queue.csv'}', header = true, "
                           "allow_quoted_nulls = false) order by all").fetchall()  # fmt: skip
    assert rows == want
    refused = generated.cli("export", "--format", "csv", "--table", "judging_queue", "--collection", "gen",
                            "--run-id", "run0", "--out", str(tmp_path / "no"), "--db", str(generated.db_path))  # fmt: skip
    assert refused.returncode == 2 and "judging_queue has no runs" in refused.stderr
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--collection", "gen", "--runs", "run0,nope", "--depth", "5"], "collection 'gen' has no run 'nope'"),
        (["--collection", "gen", "--runs", "run0,run0", "--depth", "5"], "--runs names run0 more than once"),
        (["--collection", "gen", "--all", "--depth", "0"], "--depth 0: a positive number"),
        (["--collection", "nowhere", "--all", "--depth", "5"], "collection 'nowhere' has no runs to pool"),
        (["--collection", "gen", "--all", "--depth", "5", "--method", "best"], "invalid choice: 'best'"),
        (["--collection", "gen", "--depth", "5"], "one of the arguments --runs --all is required"),
    ],
)
def test_a_bad_pool_is_refused_in_one_line_and_writes_nothing(
    generated: Warehouse, tmp_path: Path, args: list[str], message: str
) -> None:
    warehouse = generated.copy(tmp_path / "bad")
    before = warehouse_checksums(warehouse.db_path)
    result = warehouse.cli("pool", *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert warehouse_checksums(warehouse.db_path) == before
