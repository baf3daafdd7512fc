"""Fusion (retrieval_metrics.fusion) against ranx's `fuse` on the same inputs: reciprocal rank fusion and
CombSUM / CombMNZ over min-max normalised scores, with score ties, docs only one run retrieved, and a run
whose scores all tie. No dbt: the runs are written through the Python API into a fresh warehouse."""

from __future__ import annotations

import json
import random
from pathlib import Path

import duckdb
import numpy as np
import pytest

from retrieval_metrics import api
from retrieval_metrics.cli import main
from retrieval_metrics.fusion import fuse as fuse_runs
from retrieval_metrics.warehouse import InputError, connect, transaction

QUESTIONS = [f"q{i:02d}" for i in range(30)]


def make_runs(rng: random.Random) -> dict[str, list[tuple[str, str, float]]]:
    """Two runs over the same questions: 40 docs each out of 60, scores on a coarse grid (many ties); in the
    first question, every score of run b ties."""
    runs: dict[str, list[tuple[str, str, float]]] = {}
    for name in ("a", "b"):
        rows = []
        for q in QUESTIONS:
            for doc in rng.sample([f"d{j:02d}" for j in range(60)], 40):
                score = 1.0 if (name == "b" and q == "q00") else rng.randrange(0, 20) / 4 - 2
                rows.append((q, doc, score))
        runs[name] = rows
    return runs


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fusion") / "warehouse.duckdb"
    with connect(path) as con, transaction(con):
        con.execute("insert into raw.qrels values ('gen', 'q00', 'd00', 1)")  # a collection needs judgments
    for name, rows in make_runs(random.Random(5)).items():
        api.write_run("gen", name, rows, database=path)
    return path


def stored(path: Path, run_id: str) -> dict[str, dict[str, tuple[int, float]]]:
    """question -> doc -> (rank, score) of a stored run."""
    with duckdb.connect(str(path), read_only=True) as con:
        rows = con.execute("select question_id, doc_id, rank, score from raw.rankings where run_id = ?", [run_id])
        result: dict[str, dict[str, tuple[int, float]]] = {}
        for q, doc, rank, score in rows.fetchall():
            result.setdefault(q, {})[doc] = (rank, score)
        return result


@pytest.mark.parametrize(("method", "ranx_method", "norm"), [("rrf", "rrf", None), ("combsum", "sum", "min-max"),
                                                             ("combmnz", "mnz", "min-max")])  # fmt: skip
@pytest.mark.bench
def test_fused_scores_equal_ranx(database: Path, method: str, ranx_method: str, norm: str | None) -> None:
    from ranx import Run, fuse

    inputs = [stored(database, "a"), stored(database, "b")]
    n_docs = sum(len(set(inputs[0][q]) | set(inputs[1][q])) for q in QUESTIONS)  # the union of their docs
    line = fuse_runs(database, "gen", ["a", "b"], method, f"fused_{method}")
    assert line == f"wrote run gen/fused_{method}: {n_docs} ranked docs, {method} of a, b"
    if method == "rrf":
        # rrf reads ranks: ranx ranks by score, so it is given -rank, which orders the docs as the warehouse did
        ranx_runs = [Run({q: {d: -float(r) for d, (r, _) in docs.items()} for q, docs in run.items()}) for run in inputs]
    else:
        ranx_runs = [Run({q: {d: s for d, (_, s) in docs.items()} for q, docs in run.items()}) for run in inputs]
    expected = fuse(ranx_runs, norm=norm, method=ranx_method).to_dict()
    ours = stored(database, f"fused_{method}")
    assert set(ours) == set(expected)
    for q in QUESTIONS:
        assert set(ours[q]) == set(expected[q])
        for doc, (_, score) in ours[q].items():
            assert score == expected[q][doc], (q, doc)  # the same operations in the same order: the same bits
        # ranked as every run is: score as a float32 descending, ties by doc id descending
        by_rule = sorted(sorted(ours[q], reverse=True), key=lambda d: -np.float32(ours[q][d][1]))
        assert sorted(ours[q], key=lambda d: ours[q][d][0]) == by_rule


def test_the_fused_run_records_its_inputs_and_is_idempotent(database: Path) -> None:
    first = fuse_runs(database, "gen", ["a", "b"], "rrf", "again", rrf_k=10, top_k=5)
    before = stored(database, "again")
    assert fuse_runs(database, "gen", ["a", "b"], "rrf", "again", rrf_k=10, top_k=5) == first
    assert stored(database, "again") == before and all(len(docs) == 5 for docs in before.values())
    with duckdb.connect(str(database), read_only=True) as con:
        retriever, parameters = con.execute("select retriever, parameters from raw.runs where run_id = 'again'").fetchone()
        versions = [v for (v,) in con.execute("select run_version from raw.runs where run_id in ('a', 'b') order by run_id").fetchall()]
    assert retriever == "fusion:rrf"
    assert json.loads(parameters) == {"method": "rrf", "k": 10, "runs": ["a", "b"], "run_versions": versions, "top_k": 5}


@pytest.mark.parametrize(
    ("runs", "method", "run_id", "message"),
    [
        (["a"], "rrf", "x", "fusion needs two or more different runs, not a"),
        (["a", "a"], "rrf", "x", "fusion needs two or more different runs, not a, a"),
        (["a", "zz"], "rrf", "x", "collection 'gen' has no run 'zz' to fuse"),
        (["a", "b"], "rrf", "a", "the fused run 'a' would replace one of its inputs: give another --run-id"),
        (["a", "b"], "borda", "x", "unknown fusion method 'borda' (choose from rrf, combsum, combmnz)"),
    ],
)
def test_bad_fusions_are_refused_and_write_nothing(
    database: Path, runs: list[str], method: str, run_id: str, message: str
) -> None:
    with pytest.raises(InputError) as error:
        fuse_runs(database, "gen", runs, method, run_id)
    assert str(error.value) == message
    with duckdb.connect(str(database), read_only=True) as con:
        assert con.execute("select count(*) from raw.runs where run_id = 'x'").fetchone() == (0,)


def test_the_fuse_command(database: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuse", "--db", str(database), "--collection", "gen", "--runs", "a,b", "--method", "combmnz"]) == 0
    assert capsys.readouterr().out.startswith("retrieval-metrics fuse: wrote run gen/combmnz-a-b: ")
    assert main(["fuse", "--db", str(database), "--collection", "gen", "--runs", "a"]) == 2
    assert capsys.readouterr().err == "retrieval-metrics fuse: error: fusion needs two or more different runs, not a\n"
