"""The lesson's numbers, end to end from an empty database: rank, then dbt build, then the marts."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from conftest import Warehouse
from retrieval_metrics.scorecard import scorecard
from trec_reference import assert_matches_trec_eval, warehouse_inputs

pytestmark = pytest.mark.dbt

LESSON_RANKS = {
    "rate_limit_status": 2, "pro_rate_limit": 1, "pro_plan_cost": 2, "region_change": 1,
    "scale_backup_retention": 1, "sdk_api_key_variable": 1, "error_401": 1, "deletion_grace_period": 1,
    "free_plan_cost": 5,
}
# the lesson's means (0.889, 0.444, 0.807, 0.800 at k = 2), each with its 95% bootstrap interval (run_measures)
LESSON_SCORECARD = """\
docent / keyword_overlap  (retriever keyword_overlap, 9 questions)
k=1   Recall@1=0.667 [0.333, 0.889]   Precision@1=0.667 [0.333, 0.889]   NDCG@1=0.667 [0.333, 0.889]
k=2   Recall@2=0.889 [0.667, 1.000]   Precision@2=0.444 [0.333, 0.500]   NDCG@2=0.807 [0.585, 0.959]
k=3   Recall@3=0.889 [0.667, 1.000]   Precision@3=0.296 [0.222, 0.333]   NDCG@3=0.807 [0.585, 0.959]
MRR (rank-independent) = 0.800 [0.600, 0.944]"""


@pytest.fixture(scope="module")
def built(lesson: Warehouse) -> Warehouse:
    """The shared lesson warehouse: keyword_overlap ranked and built once; these tests only read it."""
    return lesson


def test_dbt_unit_tests_pin_every_measure(lesson: Warehouse, tmp_path: Path) -> None:
    """dbt's unit tests (the registry's measures on hand-made questions; docs/testing.md) check the project's SQL
    whatever the data: run once, on a copy of the lesson (dbt reads the column types of their inputs there)."""
    result = lesson.copy(tmp_path).dbt("test", "--select", "test_type:unit")
    statuses = [str(r.status) for r in result.result or [] if r.node.resource_type == "unit_test"]
    assert result.success and len(statuses) >= 6 and set(statuses) == {"pass"}, result.exception or statuses


def test_scorecard_prints_the_lessons_table(built: Warehouse) -> None:
    with built.connect() as con:
        assert scorecard(con) == LESSON_SCORECARD


def test_scorecard_leads_with_the_baseline_then_the_best_headline_first(every_retriever: Warehouse) -> None:
    """Runs are listed baseline first (here the worst run), then by NDCG at the largest k, best first, ties by
    run id (bm25 and keyword_normalized tie at NDCG@3 = 0.959): in the lesson's blocks, side by side, and
    against the baseline; run_leaderboard.run_position says the same at every k."""
    ndcg = dict(every_retriever.rows("select run_id, ndcg from run_metrics where k = 3"))
    expected = sorted(ndcg, key=lambda run_id: (run_id != "keyword_overlap", -ndcg[run_id], run_id))
    assert expected[0] == "keyword_overlap" and ndcg["keyword_overlap"] == min(ndcg.values())
    assert ndcg["bm25"] == ndcg["keyword_normalized"] and expected.index("bm25") < expected.index("keyword_normalized")
    positions = every_retriever.rows("select k, run_id, run_position from run_leaderboard order by k, run_position")
    assert [(k, run_id) for k, run_id, _ in positions] == [(k, run_id) for k in (1, 2, 3) for run_id in expected]
    assert {position for _, _, position in positions} == set(range(1, len(expected) + 1))

    with every_retriever.connect() as con:
        lines = scorecard(con).splitlines()
    assert [line.split(" / ")[1].split()[0] for line in lines if line.startswith("docent / ")] == expected
    table = lines.index("docent: runs side by side")
    assert [line.split()[0] for line in lines[table + 2 : table + 2 + len(expected)]] == expected
    versus = [line.split()[0] for line in lines if re.match(r"\S+ +k=3 ", line)]
    assert versus == expected[1:]


def test_scorecard_intervals_are_run_measures(built: Warehouse) -> None:
    """Each printed interval is run_measures' (ci_low, ci_high), around the printed run_metrics mean."""
    printed = re.findall(r"(Recall|Precision|NDCG)@(\d)=(\S+) \[(\S+), (\S+)\]", LESSON_SCORECARD)
    printed += [("MRR", None, *re.search(r"= (\S+) \[(\S+), (\S+)\]", LESSON_SCORECARD).groups())]
    assert len(printed) == 10
    measures = {"Recall": ("recall", "recall"), "Precision": ("P", "precision"), "NDCG": ("ndcg_cut", "ndcg"),
                "MRR": ("recip_rank", "mrr")}
    for label, k, value, low, high in printed:
        measure, column = measures[label]
        (mean,) = built.rows(f"select {column} from run_metrics where k = ?", [int(k or 1)])[0]
        (ci_low, ci_high) = built.rows(
            "select ci_low, ci_high from run_measures where measure = ? and k is not distinct from ?",
            [measure, None if k is None else int(k)],
        )[0]
        assert (value, low, high) == (f"{mean:.3f}", f"{ci_low:.3f}", f"{ci_high:.3f}"), (label, k)
        assert ci_low <= mean <= ci_high, (label, k)


def test_first_relevant_ranks_are_the_lessons(built: Warehouse) -> None:
    ranks = dict(built.rows("select question_id, first_relevant_rank from question_metrics where k = 2"))
    assert ranks == LESSON_RANKS


def test_run_metrics_are_the_exact_fractions(built: Warehouse) -> None:
    rows = built.rows("select k, n_questions, hit_rate, recall, precision, ndcg, mrr from run_metrics order by k")
    ndcg_rank_2 = 1 / math.log2(3)  # a single relevant doc at rank 2
    mrr = (6 * 1.0 + 2 * 0.5 + 0.2) / 9
    expected = [  # k, n_questions, hit_rate, recall, precision, ndcg, mrr
        (1, 9, 6 / 9, 6 / 9, 6 / 9, 6 / 9, mrr),
        (2, 9, 8 / 9, 8 / 9, 8 / 18, (6 + 2 * ndcg_rank_2) / 9, mrr),
        (3, 9, 8 / 9, 8 / 9, 8 / 27, (6 + 2 * ndcg_rank_2) / 9, mrr),
    ]
    assert len(rows) == len(expected)
    for row, want in zip(rows, expected):
        assert row[:2] == want[:2]
        assert row[2:] == pytest.approx(want[2:], abs=1e-12)


def test_free_plan_miss_is_diagnosed(built: Warehouse) -> None:
    rows = built.rows(
        """
        select question_id, doc_id, doc_rank, outranking_doc_ids, run_recall, recall_cost, run_recall_without_question
        from missed_relevant_docs where run_id = 'keyword_overlap' and k = 2
        """
    )
    assert len(rows) == 1
    question_id, doc_id, doc_rank, outranking, run_recall, cost, without = rows[0]
    assert (question_id, doc_id, doc_rank) == ("free_plan_cost", "plans", 5)
    assert outranking == "errors, backups, auth, ratelimits"
    assert (round(run_recall, 3), round(cost, 3), round(without, 3)) == (0.889, 0.111, 1.0)


def test_every_question_matches_pytrec_eval(built: Warehouse) -> None:
    with built.connect() as con:
        qrels, run = warehouse_inputs(con, "docent", "keyword_overlap")
        assert con.execute("select count(*) from question_metrics").fetchone() == (27,)
        assert assert_matches_trec_eval(con, "docent", "keyword_overlap", qrels, run, [1, 2, 3], tolerance=1e-12) > 0


def test_docents_own_k_values_change_its_cutoffs(built: Warehouse, tmp_path) -> None:
    rebuilt = built.copy(tmp_path / "k")
    given = rebuilt.cli("settings", "--collection", "docent", "--set", "k_values=1,5,10")  # over its seed's 1, 2, 3
    assert given.returncode == 0, given.stderr
    rebuilt.build("--exclude", "tag:lesson_golden")
    rows = rebuilt.rows("select k, recall, precision from run_metrics order by k")
    assert [r[0] for r in rows] == [1, 5, 10]
    # the Free-plan page comes back at rank 5; precision@10 still divides by 10 with only 8 docs ranked
    assert rows[1][1] == pytest.approx(1.0) and rows[2][2] == pytest.approx(9 / 90)


def test_two_builds_give_byte_identical_metric_tables(built: Warehouse, tmp_path) -> None:
    rebuilt = built.copy(tmp_path / "again")

    def export(warehouse: Warehouse, name: str) -> dict[str, bytes]:
        # DuckDB writes doubles as shortest round-trip text, so equal bytes means equal bits
        out = {}
        with warehouse.connect() as con:
            for table in ("question_metrics", "run_metrics", "missed_relevant_docs"):
                path = tmp_path / f"{name}-{table}.csv"
                con.execute(f"copy (select * from {table} order by all) to '{path}' (header)")
                out[table] = path.read_bytes()
        return out

    first = export(built, "first")
    rebuilt.build()
    assert export(rebuilt, "second") == first
