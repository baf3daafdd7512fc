"""scripts/rank.py: writes one run in one transaction, is idempotent, and refuses bad input cleanly."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from conftest import Warehouse
from warehouse import Ranking, replace_run

SEEDS = Path(__file__).resolve().parents[2] / "seeds"


def dump(warehouse: Warehouse) -> list[tuple[object, ...]]:
    """Everything in the raw schema, in a fixed order."""
    return warehouse.rows(
        """
        select 'run', collection_id, run_id, retriever, parameters, cast(created_at as varchar), null, null
        from raw.runs
        union all
        select 'ranking', collection_id, run_id, question_id, doc_id, null, rank, score from raw.rankings
        order by all
        """
    )


def test_writes_the_full_ranking_of_every_question(warehouse: Warehouse) -> None:
    result = warehouse.rank("--retriever", "keyword_overlap")
    assert result.returncode == 0, result.stderr
    assert "72 ranked docs for 9 questions" in result.stdout
    counts = warehouse.rows("select count(*), count(distinct question_id), max(rank) from raw.rankings")
    assert counts == [(72, 9, 8)]
    assert warehouse.rows("select collection_id, run_id, retriever from raw.runs") == [
        ("docent", "keyword_overlap", "keyword_overlap")
    ]


def test_keyword_overlap_reproduces_the_lessons_top_three(warehouse: Warehouse) -> None:
    warehouse.rank("--retriever", "keyword_overlap")
    top3 = dict(
        warehouse.rows(
            "select question_id, list(doc_id order by rank)[1:3] from raw.rankings group by question_id"
        )
    )
    assert top3["rate_limit_status"] == ["errors", "ratelimits", "auth"]
    assert top3["pro_plan_cost"] == ["ratelimits", "plans", "regions"]
    assert top3["region_change"] == ["regions", "deletion", "auth"]
    assert top3["free_plan_cost"] == ["errors", "backups", "auth"]


def test_rewriting_a_run_is_idempotent_and_leaves_other_runs_alone(warehouse: Warehouse) -> None:
    assert warehouse.rank("--retriever", "keyword_overlap", "--run-id", "other_run").returncode == 0
    other_before = [row for row in dump(warehouse) if row[2] == "other_run"]
    for _ in range(2):
        assert warehouse.rank("--retriever", "keyword_overlap").returncode == 0
    after = dump(warehouse)
    assert [row for row in after if row[2] == "other_run"] == other_before
    assert sum(1 for row in after if row[0] == "run") == 2
    assert sum(1 for row in after if row[0] == "ranking" and row[2] == "keyword_overlap") == 72


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--retriever", "keyword_overlap", "--run-id", "has space"], "run id 'has space' is not a plain identifier"),
        (["--retriever", "keyword_overlap", "--run-id", ""], "run id '' is not a plain identifier"),
        (["--retriever", "no_such_retriever"], "invalid choice: 'no_such_retriever'"),
    ],
)
def test_bad_arguments_exit_2_and_write_nothing(warehouse: Warehouse, args: list[str], message: str) -> None:
    assert warehouse.rank("--retriever", "keyword_overlap").returncode == 0
    before = dump(warehouse)
    result = warehouse.rank(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert dump(warehouse) == before


@pytest.mark.parametrize(
    ("docs_csv", "message"),
    [
        ("doc_id,title\nauth,Authentication\n", "docs.csv:1: missing column(s) text"),
        ("doc_id,title,text\nauth,A,x\nplans,P,y\nauth,B,z\n", "docs.csv:4: duplicate doc_id 'auth' (first on line 2)"),
        ("doc_id,title,text\nauth,A,x\n,P,y\n", "docs.csv:3: empty doc_id"),
        ("doc_id,title,text\nauth,A\n", "docs.csv:2: expected 3 fields"),
        ("doc_id,title,text\n", "docs.csv: no rows"),
    ],
)
def test_bad_seed_files_name_the_file_and_line(
    warehouse: Warehouse, tmp_path: Path, docs_csv: str, message: str
) -> None:
    assert warehouse.rank("--retriever", "keyword_overlap").returncode == 0
    before = dump(warehouse)
    bad = tmp_path / "docs.csv"
    bad.write_text(docs_csv)
    result = warehouse.rank("--retriever", "keyword_overlap", "--docs", str(bad))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert dump(warehouse) == before


def test_a_failed_write_rolls_back_and_keeps_the_earlier_run(warehouse: Warehouse) -> None:
    assert warehouse.rank("--retriever", "keyword_overlap").returncode == 0
    before = dump(warehouse)
    # a ranking with a missing doc id violates raw.rankings' NOT NULL after the old rows were deleted
    broken = Ranking(question_ids=["q1", "q1"], doc_ids=["a"], ranks=[1, 2], scores=[1.0, 0.5])
    with duckdb.connect(str(warehouse.db_path)) as con, pytest.raises(duckdb.ConstraintException):
        replace_run(
            con, collection_id="docent", run_id="keyword_overlap", retriever="x", parameters="{}", ranking=broken
        )
    assert dump(warehouse) == before


def test_dbt_build_without_any_run_says_what_to_do(warehouse: Warehouse) -> None:
    result = warehouse.dbt("build")
    assert not result.success
    assert "raw.runs is missing" in str(result.exception) and "scripts/rank.py" in str(result.exception)
