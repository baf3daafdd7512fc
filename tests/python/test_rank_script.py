"""`retrieval-metrics rank`: writes one run in one transaction, is idempotent, and refuses bad input cleanly.

rank reads the collection without dbt (Docent's seed files, an imported collection's raw tables); the tests that
build are `dbt` (the whole module, for the lesson's warehouse they share). The lesson's warehouse (keyword_overlap ranked, built) is shared and only read; a test that writes works on a
copy of it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from conftest import Warehouse
from retrieval_metrics.raw_tables import Ranking, Run, replace_run
from retrieval_metrics.warehouse import transaction

pytestmark = pytest.mark.dbt

ERROR = "retrieval-metrics rank: error: "


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


def test_writes_the_full_ranking_of_every_question(lesson: Warehouse) -> None:
    # rank's own line ("retrieval-metrics rank: wrote run docent/keyword_overlap: 72 ranked docs for 9
    # questions") is checked where a test ranks: test_rewriting_... below and test_progress.py
    counts = lesson.rows("select count(*), count(distinct question_id), max(rank) from raw.rankings")
    assert counts == [(72, 9, 8)]
    assert lesson.rows("select collection_id, run_id, retriever from raw.runs") == [
        ("docent", "keyword_overlap", "keyword_overlap")
    ]


def test_keyword_overlap_reproduces_the_lessons_top_three(lesson: Warehouse) -> None:
    top3 = dict(
        lesson.rows("select question_id, list(doc_id order by rank)[1:3] from raw.rankings group by question_id")
    )
    assert top3["rate_limit_status"] == ["errors", "ratelimits", "auth"]
    assert top3["pro_plan_cost"] == ["ratelimits", "plans", "regions"]
    assert top3["region_change"] == ["regions", "deletion", "auth"]
    assert top3["free_plan_cost"] == ["errors", "backups", "auth"]


def test_rewriting_a_run_is_idempotent_and_leaves_other_runs_alone(lesson: Warehouse, tmp_path: Path) -> None:
    warehouse = lesson.copy(tmp_path / "lesson")  # keyword_overlap written once already
    other = warehouse.rank("--retriever", "keyword_overlap", "--run-id", "other_run")
    assert other.returncode == 0, other.stderr
    assert other.stdout == "retrieval-metrics rank: wrote run docent/other_run: 72 ranked docs for 9 questions\n"
    other_before = [row for row in dump(warehouse) if row[2] == "other_run"]
    again = warehouse.rank("--retriever", "keyword_overlap")  # the rewrite
    assert again.returncode == 0, again.stderr
    assert "72 ranked docs for 9 questions" in again.stdout
    assert again.stdout.startswith("retrieval-metrics rank: wrote run docent/keyword_overlap: ")
    after = dump(warehouse)
    assert [row for row in after if row[2] == "other_run"] == other_before
    assert sum(1 for row in after if row[0] == "run") == 2
    assert sum(1 for row in after if row[0] == "ranking" and row[2] == "keyword_overlap") == 72
    # the rewrite is the lesson's run again, to the row (only created_at moved)
    lesson_rows = [row[:5] + row[6:] for row in dump(lesson)]
    assert [row[:5] + row[6:] for row in after if row[2] == "keyword_overlap"] == lesson_rows


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--retriever", "keyword_overlap", "--run-id", "has space"], "run id 'has space' is not a plain identifier"),
        (["--retriever", "keyword_overlap", "--run-id", ""], "run id '' is not a plain identifier"),
        (["--retriever", "no_such_retriever"], "unknown retriever 'no_such_retriever' (choose from keyword_overlap"),
    ],
)
def test_bad_arguments_exit_2_and_write_nothing(
    lesson: Warehouse, tmp_path: Path, args: list[str], message: str
) -> None:
    warehouse = lesson.copy(tmp_path / "lesson")
    before = dump(warehouse)
    result = warehouse.rank(*args)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(ERROR), result.stderr
    assert message in result.stderr
    assert dump(warehouse) == before


@pytest.mark.parametrize(
    ("docs_csv", "message"),
    [
        ("doc_id,title,text\nauth,A,x\nplans,P,y\nauth,B,z\n", "2: doc_id 'auth' appears more than once"),
        ("doc_id,title,text\nauth,A,x\n,P,y\n", "3: no doc_id"),
    ],
    ids=["duplicate-doc_id", "empty-doc_id"],
)
def test_a_bad_seed_file_stops_rank_in_one_line_naming_its_line(
    project_copy: Warehouse, lesson: Warehouse, docs_csv: str, message: str
) -> None:
    """rank reads Docent's seed files as the next build loads them: a doc id the seeds' tests would refuse
    (seeds/_seeds.yml: unique, not null) stops it in one line naming the file and line, before anything is
    written."""
    shutil.copy(lesson.db_path, project_copy.db_path)  # a warehouse with the lesson's run, to keep intact
    before = dump(project_copy)
    (project_copy.project_dir / "seeds" / "docs.csv").write_text(docs_csv)
    result = project_copy.rank("--retriever", "keyword_overlap")
    assert result.returncode == 2
    assert result.stderr == f"{ERROR}{project_copy.project_dir / 'seeds' / 'docs.csv'}:{message}\n"
    assert result.stdout == "" and dump(project_copy) == before


def test_a_failed_write_rolls_back_and_keeps_the_earlier_run(lesson: Warehouse, tmp_path: Path) -> None:
    warehouse = lesson.copy(tmp_path / "lesson")
    before = dump(warehouse)
    # a ranking with a missing doc id violates raw.rankings' NOT NULL after the old rows were deleted
    broken = Ranking(question_ids=["q1", "q1"], doc_ids=["a"], ranks=[1, 2], scores=[1.0, 0.5])
    run = Run(collection_id="docent", run_id="keyword_overlap", retriever="x", parameters={})
    with duckdb.connect(str(warehouse.db_path)) as con, pytest.raises(duckdb.ConstraintException):
        with transaction(con):
            replace_run(con, run, *broken.as_rows())
    assert dump(warehouse) == before


def test_dbt_build_without_any_run_says_what_to_do(warehouse: Warehouse) -> None:
    result = warehouse.dbt("build")
    assert not result.success
    assert "raw.runs is missing" in str(result.exception) and "retrieval-metrics rank" in str(result.exception)


def test_an_imported_beir_collection_is_ranked_from_the_warehouse(lesson: Warehouse, tmp_path: Path) -> None:
    """The same loader serves every collection: a BEIR folder's documents and questions, imported, are ranked
    by a built-in retriever, ties broken by the collection's tie rule (trec_eval's, by default: doc id descending)."""
    warehouse = lesson.copy(tmp_path / "beir")
    folder = tmp_path / "mini"
    (folder / "qrels").mkdir(parents=True)
    corpus = [("d2", "Pricing", "free plan costs nothing"), ("d1", "Limits", "rate limits per minute"),
              ("d3", "Other", "nothing in common")]  # fmt: skip
    (folder / "corpus.jsonl").write_text(
        "".join(f'{{"_id": "{i}", "title": "{t}", "text": "{x}"}}\n' for i, t, x in corpus)
    )
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "what does the free plan cost"}\n'
                                          '{"_id": "q2", "text": "zebra"}\n')  # fmt: skip
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td2\t1\nq2\td1\t1\n")
    imported = warehouse.cli("import", "--collection", "mini", "--beir", str(folder))
    assert imported.returncode == 0, imported.stderr
    ranked = warehouse.rank("--retriever", "keyword_overlap", "--collection", "mini")
    assert ranked.returncode == 0, ranked.stderr
    assert ranked.stdout == "retrieval-metrics rank: wrote run mini/keyword_overlap: 6 ranked docs for 2 questions\n"
    rows = warehouse.rows(
        "select question_id, list(doc_id order by rank), list(score order by rank) from raw.rankings "
        "where collection_id = 'mini' group by question_id order by question_id"
    )
    # q1 matches d2 on "free", "plan" (and "pricing" is not in it); q2 matches nothing: ties by doc id descending
    assert rows == [("q1", ["d2", "d3", "d1"], [2.0, 0.0, 0.0]), ("q2", ["d3", "d2", "d1"], [0.0, 0.0, 0.0])]
    assert dump(warehouse) != dump(lesson)
    assert [row for row in dump(warehouse) if row[1] == "docent"] == dump(lesson)  # docent untouched


def test_rank_ranks_the_seed_files_as_they_stand(project_copy: Warehouse) -> None:
    """An edited seed file is what gets ranked, with no dbt build between: the new document, for every question."""
    project_copy.ranked("--retriever", "keyword_overlap")
    with (project_copy.project_dir / "seeds" / "docs.csv").open("a") as docs:
        docs.write("billing,Billing,Invoices are sent monthly for the Pro plan.\n")
    ranked = project_copy.rank("--retriever", "keyword_overlap")
    assert ranked.returncode == 0, ranked.stderr
    assert "81 ranked docs for 9 questions" in ranked.stdout
    assert project_copy.rows("select count(distinct doc_id) from raw.rankings") == [(9,)]
