"""What new judgments changed (docs/judging.md): qrels_version_changes keeps each run's means at every qrels
version a build measured, and qrels_version_leaderboard_changes says whether the runs' order moved: Kendall's
tau-b (equal to scipy's), tau_AP and rank-biased overlap (equal to a direct computation from their papers'
definitions) and the pairs that swapped."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from scipy import stats

from conftest import Warehouse
from test_trec_agreement import make_collection

pytestmark = pytest.mark.dbt

RBO_PERSISTENCE = 0.9  # dbt_project.yml's var rbo_persistence


def run_means(warehouse: Warehouse) -> dict[tuple[str, str], float]:
    return {(run_id, name): value for run_id, name, value in warehouse.rows(
        "select run_id, measure_name, value from run_measures where collection_id = 'gen'")}  # fmt: skip


@pytest.fixture(scope="module")
def versions(lesson: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> tuple[Warehouse, list[dict]]:
    """A generated collection with 5 runs measured at versions 0, 1 (a label file that judges run4's unjudged
    top 3 relevant and every other run's not) and 2 (a second person taking back half of those): the run means
    after each build."""
    folder = tmp_path_factory.mktemp("version_changes")
    qrels, runs = make_collection(random.Random(30), folder / "collection", n_runs=5)
    warehouse = lesson.copy(folder / "warehouse")
    for number, run in enumerate(runs):
        extra = ["--qrels", str(qrels)] if number == 0 else []
        result = warehouse.cli("import", "--collection", "gen", *extra, "--run", str(run), "--run-id", f"run{number}")
        assert result.returncode == 0, result.stderr
    assert warehouse.cli("build").returncode == 0
    means = [run_means(warehouse)]
    unjudged = warehouse.rows(
        "select r.question_id, r.doc_id, bool_or(r.run_id = 'run4') from raw.rankings as r "
        "where r.collection_id = 'gen' and r.rank <= 3 and not exists (select 1 from raw.qrels as q "
        "where q.collection_id = 'gen' and q.question_id = r.question_id and q.doc_id = r.doc_id) "
        "group by all order by all")  # fmt: skip
    first = folder / "first.csv"
    first.write_text("question_id,doc_id,grade\n" + "".join(f"{q},{d},{2 if by_run4 else 0}\n"
                                                            for q, d, by_run4 in unjudged))  # fmt: skip
    result = warehouse.cli("import", "--collection", "gen", "--judgments", str(first), "--judge", "ann", "--build")
    assert result.returncode == 0, result.stderr
    means.append(run_means(warehouse))
    taken_back = [(q, d) for q, d, by_run4 in unjudged[::2] if by_run4]
    assert len(taken_back) % 2 == 0  # an even number of grades changed alike: DuckDB's hash() of the three
    # columns xors the columns' hashes, and such changes once cancelled out in the judgments' fingerprint
    second = folder / "second.csv"
    second.write_text("question_id,doc_id,grade\n" + "".join(f"{q},{d},0\n" for q, d in taken_back))
    result = warehouse.cli("import", "--collection", "gen", "--judgments", str(second), "--judge", "bo", "--build")
    assert result.returncode == 0, result.stderr
    means.append(run_means(warehouse))
    return warehouse, means


def leaderboard(values: dict[str, float]) -> list[str]:
    return sorted(values, key=lambda run_id: (-values[run_id], run_id))


def tau_ap(estimate: list[str], truth: list[str]) -> float:
    """Yilmaz, Aslam and Robertson (2008), eq. 3: for each item at place i >= 2 of `estimate`, the share of the
    items above it there that `truth` also ranks above it."""
    place = {item: i for i, item in enumerate(truth)}
    total = sum(sum(place[above] < place[item] for above in estimate[:i]) / i for i, item in enumerate(estimate) if i)
    return 2.0 / (len(estimate) - 1) * total - 1.0


def rbo(first: list[str], second: list[str], p: float) -> float:
    """Webber, Moffat and Zobel (2010), eq. 32 (RBO_EXT) for two lists of the same n items."""
    n = len(first)
    overlap = [len(set(first[:d]) & set(second[:d])) / d for d in range(1, n + 1)]
    return overlap[-1] * p**n + (1 - p) / p * sum(a * p**d for d, a in enumerate(overlap, start=1))


def test_the_means_of_every_version_are_kept_and_compared(versions: tuple[Warehouse, list[dict]]) -> None:
    warehouse, means = versions
    rows = warehouse.rows("select from_qrels_version, to_qrels_version, run_id, measure_name, value_from, value_to, "
                          "value_change, rank_from, rank_to from qrels_version_changes where collection_id = 'gen'")  # fmt: skip
    pairs = {(a, b) for a, b, *_ in rows}
    assert pairs == {(0, 1), (0, 2), (1, 2)}
    assert len(rows) == 3 * len(means[0])  # every run and measure, at each pair
    for a, b, run_id, name, value_from, value_to, change, rank_from, rank_to in rows:
        assert (value_from, value_to) == (means[a][run_id, name], means[b][run_id, name])  # bit for bit
        assert change == value_to - value_from
        assert rank_from == leaderboard({r: v for (r, n), v in means[a].items() if n == name}).index(run_id) + 1
        assert rank_to == leaderboard({r: v for (r, n), v in means[b].items() if n == name}).index(run_id) + 1
    # the first version judged run4's top relevant: it climbs, the others lose Judged@3's holes
    judged = {(a, b, r): v for a, b, r, n, _, v, *_ in rows if n == "Judged@3"}
    assert all(judged[0, 1, f"run{i}"] >= means[0][f"run{i}", "Judged@3"] for i in range(5))
    assert means[1]["run4", "P_3"] > means[0]["run4", "P_3"]
    assert means[2]["run4", "P_3"] < means[1]["run4", "P_3"]  # the second person took half of those back


def test_leaderboard_changes_equal_a_direct_computation(versions: tuple[Warehouse, list[dict]]) -> None:
    warehouse, means = versions
    catalog = dict(warehouse.rows("select measure, aggregation from measure_catalog"))
    rows = warehouse.rows("select from_qrels_version, to_qrels_version, measure, measure_name, n_runs, kendall_tau, "
                          "tau_ap, rbo, n_swapped_pairs, swapped_pairs from qrels_version_leaderboard_changes "
                          "where collection_id = 'gen'")  # fmt: skip
    names = {n for _, n in means[0]}
    measure_of = dict(warehouse.rows("select distinct measure_name, measure from run_measures"))
    assert {(a, b, n) for a, b, _, n, *_ in rows} == {
        (a, b, n) for a, b in [(0, 1), (0, 2), (1, 2)] for n in names if catalog[measure_of[n]] != "sum"}
    swapped_somewhere = 0
    for a, b, _, name, n_runs, kendall, tau_ap_value, rbo_value, n_swapped, swapped in rows:
        before = {r: v for (r, n), v in means[a].items() if n == name}
        after = {r: v for (r, n), v in means[b].items() if n == name}
        run_ids = sorted(before)
        assert n_runs == 5
        expected = stats.kendalltau([before[r] for r in run_ids], [after[r] for r in run_ids]).statistic
        if math.isnan(expected):
            assert kendall is None
        else:
            assert kendall == pytest.approx(expected, abs=1e-12), (a, b, name)
        assert tau_ap_value == pytest.approx(tau_ap(leaderboard(before), leaderboard(after)), abs=1e-12)
        assert rbo_value == pytest.approx(rbo(leaderboard(before), leaderboard(after), RBO_PERSISTENCE), abs=1e-12)
        expected_swaps = sorted(f"{x} > {y} became {y} > {x}" for x in run_ids for y in run_ids
                                if before[x] > before[y] and after[x] < after[y])  # fmt: skip
        assert n_swapped == len(expected_swaps)
        assert swapped == ("; ".join(expected_swaps) if expected_swaps else None)
        swapped_somewhere += n_swapped
    assert swapped_somewhere > 0  # run4's new relevant documents move it past others
    unchanged = [row for row in rows if row[0] == 0 and row[3] == "num_ret"]
    assert not unchanged  # sums have no leaderboard


def test_history_survives_a_full_refresh_and_forgets_a_rewritten_run(versions: tuple[Warehouse, list[dict]],
                                                                     tmp_path: Path) -> None:  # fmt: skip
    warehouse = versions[0].copy(tmp_path / "copy")
    before = warehouse.rows("select * from qrels_version_changes order by all")
    leaderboards = warehouse.rows("select * from qrels_version_leaderboard_changes order by all")
    assert warehouse.cli("build", "--full-refresh").returncode == 0
    assert warehouse.rows("select * from qrels_version_changes order by all") == before
    assert warehouse.rows("select * from qrels_version_leaderboard_changes order by all") == leaderboards
    run = tmp_path / "run0.txt"
    run.write_text("".join(f"{q} Q0 {d} {rank} {10 - rank} x\n" for q, d, rank in warehouse.rows(
        "select question_id, doc_id, rank from raw.rankings where run_id = 'run1' and collection_id = 'gen'")))
    result = warehouse.cli("import", "--collection", "gen", "--run", str(run), "--run-id", "run0", "--build")
    assert result.returncode == 0, result.stderr
    kept = warehouse.rows("select distinct run_id, qrels_version from run_means_by_qrels_version "
                          "where collection_id = 'gen' and run_id in ('run0', 'run1') order by all")  # fmt: skip
    assert kept == [("run0", 2), ("run1", 0), ("run1", 1), ("run1", 2)]  # run0 written again: its old means go
    assert not warehouse.rows("select 1 from qrels_version_changes where run_id = 'run0'")


def test_the_report_shows_what_each_version_changed(versions: tuple[Warehouse, list[dict]], tmp_path: Path) -> None:
    warehouse, _ = versions
    assert warehouse.cli("report", "--out", str(tmp_path / "report")).returncode == 0
    page = (tmp_path / "report" / "index.html").read_text()
    assert "<h3>What new judgments changed</h3>" in page
    for a, b, swapped in warehouse.rows(
        "select from_qrels_version, to_qrels_version, swapped_pairs from qrels_version_leaderboard_changes "
        "where collection_id = 'gen' and measure_name = 'recip_rank' and to_qrels_version = from_qrels_version + 1"
    ):
        assert f'data-from="{a}" data-to="{b}" data-measure="recip_rank"' in page
        assert (swapped or "none").replace(">", "&gt;") in page


def test_a_build_of_run_measures_without_its_parents_records_no_version(versions: tuple[Warehouse, list[dict]],
                                                                        tmp_path: Path) -> None:  # fmt: skip
    """run_measures built alone after a new version reads a stale question_measures: its means are not kept as
    that version's; the next whole build keeps the real ones."""
    warehouse = versions[0].copy(tmp_path / "copy")
    labels = tmp_path / "third.csv"
    labels.write_text("question_id,doc_id,grade\n" + "".join(f"{q},{d},{g + 1}\n" for q, d, g in warehouse.rows(
        "select question_id, doc_id, relevance from raw.qrels where collection_id = 'gen' and relevance >= 0 "
        "order by all limit 5")))  # fmt: skip
    assert warehouse.cli("import", "--collection", "gen", "--judgments", str(labels)).returncode == 0
    assert warehouse.cli("build", "--select", "run_measures").returncode == 0
    recorded = "select distinct qrels_version from run_means_by_qrels_version where collection_id = 'gen'"
    assert sorted(warehouse.rows(recorded)) == [(0,), (1,), (2,)]
    assert warehouse.cli("build").returncode == 0
    assert sorted(warehouse.rows(recorded)) == [(0,), (1,), (2,), (3,)]
    assert sorted(warehouse.rows("select run_id, measure_name, value_to from qrels_version_changes "
                                 "where collection_id = 'gen' and from_qrels_version = 2 and to_qrels_version = 3")) == \
        sorted(warehouse.rows("select run_id, measure_name, value from run_measures where collection_id = 'gen'"))
