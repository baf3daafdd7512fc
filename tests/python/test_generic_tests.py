"""Our generic data tests catch what they promise: break one question's ranking in raw.rankings by hand and
the right test fails, with one failing row.

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
    # name: (SQL that breaks the keyword_overlap run's ranking of question error_401, the test that must fail)
    "repeated rank": ("update raw.rankings set rank = 2 where rank = 3", "ranks_contiguous"),  # min 1, max n kept
    "gap in ranks": ("update raw.rankings set rank = 9 where rank = 8", "ranks_contiguous"),
    "ranks from 0": ("update raw.rankings set rank = rank - 1 where true", "ranks_contiguous"),
    "rank far beyond n": ("update raw.rankings set rank = 100000 where rank = 1", "ranks_contiguous"),
    "repeated doc": ("update raw.rankings set doc_id = 'errors' where rank = 3", "primary_key"),
    "null doc": ("update raw.rankings set doc_id = null where rank = 2", "primary_key"),
}


def failed_tests(warehouse: Warehouse) -> dict[str, int]:
    result = warehouse.dbt("test", "--select", *RANKING_TESTS)
    return {
        r.node.name.split("_stg_raw__rankings")[0]: r.failures
        for r in result.result or []
        if str(r.status) == "fail"
    }


def test_the_clean_ranking_passes_both_tests(lesson: Warehouse, tmp_path: Path) -> None:
    assert failed_tests(lesson.copy(tmp_path / "clean")) == {}


@pytest.mark.parametrize("breakage", list(BREAKAGES))
def test_broken_ranking_fails_its_test(lesson: Warehouse, tmp_path: Path, breakage: str) -> None:
    warehouse = lesson.copy(tmp_path / "broken")  # the shared lesson build, copied: nothing is rebuilt
    sql, test_name = BREAKAGES[breakage]
    with duckdb.connect(str(warehouse.db_path)) as con:
        con.execute("alter table raw.rankings alter column doc_id drop not null")
        con.execute(f"{sql} and question_id = 'error_401' and run_id = 'keyword_overlap'")
    failures = failed_tests(warehouse)
    assert failures.get(test_name) == 1, failures
