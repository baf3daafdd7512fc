"""Our generic data tests catch what they promise: break a question's ranking in raw.rankings by hand and
the right test fails for that question, with one failing row.

primary_key finds repeats through a 64-bit hash first, ranks_contiguous counts distinct ranks in a bitstring
per group (macros/portable_sql.sql); these cases show that both pass on the clean ranking and still fail on
every kind of breakage.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from conftest import Warehouse

pytestmark = pytest.mark.dbt

RANKING_TESTS = ["stg_raw__rankings,test_name:primary_key", "stg_raw__rankings,test_name:ranks_contiguous"]
BREAKAGES = {
    # name: (SQL that breaks one question's ranking in the keyword_overlap run, the question, the test that must
    # fail for that question and only that one)
    "repeated rank": ("update raw.rankings set rank = 2 where rank = 3", "pro_rate_limit", "ranks_contiguous"),
    "gap in ranks": ("update raw.rankings set rank = 9 where rank = 8", "region_change", "ranks_contiguous"),
    "ranks from 0": ("update raw.rankings set rank = rank - 1 where true", "scale_backup_retention",
                     "ranks_contiguous"),
    "rank far beyond n": ("update raw.rankings set rank = 100000 where rank = 1", "sdk_api_key_variable",
                          "ranks_contiguous"),
    "repeated doc": ("update raw.rankings set doc_id = 'errors' where rank = 3", "error_401", "primary_key"),
    "null doc": ("update raw.rankings set doc_id = null where rank = 2", "deletion_grace_period", "primary_key"),
}  # fmt: skip


def failing_questions(warehouse: Warehouse) -> dict[str, list[str]]:
    """Run the two tests with their failures stored; per test, the questions of its failing rows."""
    # every run (test_all_runs): the copies' runs were computed before their raw rows were broken
    result = warehouse.dbt("test", "--select", *RANKING_TESTS, "--store-failures", "--vars", "{test_all_runs: true}")
    failing: dict[str, list[str]] = {}
    for r in result.result or []:
        if str(r.node.resource_type) != "test":
            continue  # the project's on-run-start hook
        name = r.node.name.split("_stg_raw__rankings")[0]
        assert str(r.status) in {"pass", "fail"}, (name, r.status, r.message)
        rows = warehouse.rows(f"select question_id from {r.node.relation_name} order by 1")
        assert len(rows) == r.failures, name
        failing[name] = [str(question_id) for (question_id,) in rows]
    return failing


def test_the_clean_ranking_passes_both_tests(lesson: Warehouse, tmp_path: Path) -> None:
    assert failing_questions(lesson.copy(tmp_path / "clean")) == {"primary_key": [], "ranks_contiguous": []}


def test_each_broken_ranking_fails_its_test_with_one_row(lesson: Warehouse, tmp_path: Path) -> None:
    """Every breakage at once, each in its own question of a copy of the lesson's build (nothing is rebuilt):
    each question fails exactly its own test, with exactly one row."""
    warehouse = lesson.copy(tmp_path / "broken")
    with duckdb.connect(str(warehouse.db_path)) as con:
        con.execute("alter table raw.rankings alter column doc_id drop not null")
        for sql, question_id, _ in BREAKAGES.values():
            con.execute(f"{sql} and question_id = ? and run_id = 'keyword_overlap'", [question_id])
    expected: dict[str, list[str]] = {"primary_key": [], "ranks_contiguous": []}
    for _, question_id, test_name in BREAKAGES.values():
        expected[test_name].append(question_id)
    assert failing_questions(warehouse) == {name: sorted(questions) for name, questions in expected.items()}
