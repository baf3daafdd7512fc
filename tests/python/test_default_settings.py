"""A collection that is not the lesson gets general defaults: the cutoffs 1, 3, 5, 10, 100 and no baseline (the
vars k_values and baseline_run_id), while Docent keeps the lesson's k = 1, 2, 3 against keyword_overlap through
its seed rows. Without a baseline nothing is compared (no rows, no error) and the scorecard says so in one line
with the command that sets one; set, the runs are compared; unset, back to none. The scorecard's columns line up
at any k (1, 10, 1000, 10000 here)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import Warehouse
from retrieval_metrics.cli import main as cli
from retrieval_metrics.scorecard import scorecard
from retrieval_metrics.settings import check_vars, project_defaults
from retrieval_metrics.warehouse import InputError
from test_comparisons import BASELINE_RANKS, BETTER_RANKS, WORSE_RANKS, write_run

pytestmark = pytest.mark.dbt

COMPARISON_MARTS = ["question_comparisons", "run_comparisons", "run_tag_comparisons"]
WIDE_KS = [1, 10, 1000, 10000]


@pytest.fixture(scope="module")
def new_collection(lesson: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    """The lesson's warehouse plus collection `pair` (its qrels and three runs, nothing set), built as a user
    builds it."""
    folder = tmp_path_factory.mktemp("defaults")
    warehouse = lesson.copy(folder)
    qrels = folder / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 rel 1\n" for q in BASELINE_RANKS))
    tags = folder / "tags.tsv"  # so that run_tag_comparisons would have rows of pair too
    tags.write_text("".join(f"{q} all\n" for q in BASELINE_RANKS) + "q1 head\nq2 head\nq3 head\n")
    db = ["--db", str(warehouse.db_path)]
    assert cli(["import", "--collection", "pair", "--qrels", str(qrels), "--tags", str(tags), *db]) == 0
    for run_id, ranks in (("base", BASELINE_RANKS), ("better_than_base", BETTER_RANKS), ("worse", WORSE_RANKS)):
        run = write_run(folder / f"{run_id}.txt", ranks)
        assert cli(["import", "--collection", "pair", "--run", str(run), "--run-id", run_id, *db]) == 0
    return warehouse.built()


def settings_rows(warehouse: Warehouse, setting: str) -> dict[str, tuple[list[str], set[str]]]:
    """Per collection: the setting's values (int_collection_settings) and where they come from."""
    found: dict[str, tuple[list[str], set[str]]] = {}
    for collection_id, value, set_by in warehouse.rows(
        "select collection_id, value, set_by from intermediate.int_collection_settings where setting = ? "
        "order by collection_id, try_cast(value as integer), value", [setting]
    ):
        values, sources = found.setdefault(str(collection_id), ([], set()))
        values.append(str(value))
        sources.add(str(set_by))
    return found


def compared_collections(warehouse: Warehouse) -> dict[str, set[str]]:
    """Per comparison mart: the collections it has rows of."""
    return {mart: {c for (c,) in warehouse.rows(f"select distinct collection_id from {mart}")}
            for mart in COMPARISON_MARTS}  # fmt: skip


def not_compared_line(collection_id: str = "pair") -> str:
    return (f"{collection_id}: no baseline run, so its runs are not compared: set one with `retrieval-metrics settings "
            f"--collection {collection_id} --set baseline_run_id=base` (its runs: base, better_than_base, worse), "
            "then `retrieval-metrics build`")


def test_a_new_collection_gets_general_cutoffs_and_no_baseline(new_collection: Warehouse) -> None:
    defaults = project_defaults()
    assert (defaults["k_values"], defaults["baseline_run_id"]) == ([1, 3, 5, 10, 100], "none")
    cutoffs = settings_rows(new_collection, "k_values")
    assert cutoffs["pair"] == (["1", "3", "5", "10", "100"], {"var"})
    assert cutoffs["docent"] == (["1", "2", "3"], {"seed"})  # the lesson's, from its seed rows
    assert settings_rows(new_collection, "baseline_run_id") == {"docent": (["keyword_overlap"], {"seed"})}
    assert new_collection.rows("select collection_id, baseline_run_ids from "
                               "intermediate.int_collection_evaluation_settings order by 1") == [
        ("docent", "keyword_overlap"), ("pair", None)]  # fmt: skip
    assert new_collection.rows("select distinct k from run_metrics where collection_id = 'pair' order by k") == [
        (1,), (3,), (5,), (10,), (100,)]  # fmt: skip
    # nothing compared for pair, and the build (its regression gate included) passed
    assert all("pair" not in collections for collections in compared_collections(new_collection).values())
    assert new_collection.rows("select distinct baseline_run_id from run_leaderboard where collection_id = 'pair'"
                               ) == [(None,)]  # fmt: skip
    shown = new_collection.cli("settings", "--collection", "pair")
    assert "k_values 1, 3, 5, 10, 100 (the var's);" in shown.stdout, shown.stderr
    assert "baseline_run_id none (the var's);" in shown.stdout, shown.stderr


def test_the_scorecard_says_in_one_line_how_to_set_a_baseline(new_collection: Warehouse) -> None:
    with new_collection.connect() as con:
        lines = scorecard(con).splitlines()
    table = lines.index("pair: runs side by side")
    assert lines[table + 5 : table + 7] == ["", not_compared_line()]  # after the header and the three runs
    assert not any(line.startswith("NDCG@k against the baseline") for line in lines)


def test_a_baseline_once_set_compares_and_unset_goes_back_to_none(new_collection: Warehouse, tmp_path: Path) -> None:
    warehouse = new_collection.copy(tmp_path)
    given = warehouse.cli("settings", "--collection", "pair", "--set", "baseline_run_id=base")
    assert given.returncode == 0 and "baseline_run_id base (set here)" in given.stdout, given.stderr
    warehouse.built()
    assert all("pair" in collections for collections in compared_collections(warehouse).values())
    assert warehouse.rows("select distinct run_id, baseline_run_id from run_comparisons where collection_id = 'pair' "
                          "order by 1") == [("better_than_base", "base"), ("worse", "base")]  # fmt: skip

    unset = warehouse.cli("settings", "--collection", "pair", "--unset", "baseline_run_id")
    assert unset.returncode == 0 and "baseline_run_id none (the var's)" in unset.stdout, unset.stderr
    warehouse.built()  # the runs' stored comparisons go with the baseline
    assert all("pair" not in collections for collections in compared_collections(warehouse).values())
    with warehouse.connect() as con:
        assert not_compared_line() in scorecard(con).splitlines()

    # none said outright: stored as none, shown as set here; nothing checked against the runs
    none = warehouse.cli("settings", "--collection", "pair", "--set", "baseline_run_id=None")
    assert none.returncode == 0 and "baseline_run_id none (set here)" in none.stdout, none.stderr
    assert warehouse.rows("select value from raw.collection_settings where collection_id = 'pair' "
                          "and setting = 'baseline_run_id'") == [("none",)]  # fmt: skip


def test_vars_may_say_none_and_still_refuse_a_run_that_is_not_there(new_collection: Warehouse) -> None:
    check_vars(new_collection.db_path, ["--vars", "{baseline_run_id: none}"])
    check_vars(new_collection.db_path, ["--vars", "{baseline_run_id: base}"])
    with pytest.raises(InputError, match="var baseline_run_id: 'nosuch' is not a run of any collection"):
        check_vars(new_collection.db_path, ["--vars", "{baseline_run_id: nosuch}"])


def offsets(line: str, marks: list[str]) -> list[int]:
    return [line.index(mark) for mark in marks]


def test_the_scorecards_columns_line_up_at_any_k(new_collection: Warehouse, tmp_path: Path) -> None:
    """At k = 1, 10, 1000 and 10000, with run ids of different lengths: in each run's block the measures start
    at the same offsets on every k line; side by side every column ends where its header does; against the
    baseline the fields start at the same offsets on every line."""
    warehouse = new_collection.copy(tmp_path)
    given = warehouse.cli("settings", "--collection", "pair", "--set", f"k_values={','.join(map(str, WIDE_KS))}",
                          "--set", "baseline_run_id=base")  # fmt: skip
    assert given.returncode == 0, given.stderr
    warehouse.built()
    with warehouse.connect() as con:
        lines = scorecard(con).splitlines()

    blocks = [i for i, line in enumerate(lines) if line.startswith("pair / ")]
    assert len(blocks) == 3
    for start in blocks:
        rows = lines[start + 1 : start + 1 + len(WIDE_KS)]
        assert [row.split()[0] for row in rows] == [f"k={k}" for k in WIDE_KS]
        first = [re.search(rf"{label}@\d+=", rows[0]).start() for label in ("Recall", "Precision", "NDCG")]
        for row, k in zip(rows, WIDE_KS):
            assert offsets(row, [f"Recall@{k}=", f"Precision@{k}=", f"NDCG@{k}="]) == first, row

    table = lines.index("pair: runs side by side")
    header, *runs = lines[table + 1 : table + 5]
    assert header.split()[1:] == [f"{m}@{k}" for m in ("R", "P", "NDCG") for k in WIDE_KS] + ["MRR"]
    ends = [match.end() for match in re.finditer(r"\S+", header)][1:]  # the numbers are right-aligned
    for row in runs:
        assert [match.end() for match in re.finditer(r"\S+", row)][1:] == ends, row

    versus = [line for line in lines[table + 5 :] if re.match(r"\S+ +k=\d+ ", line)]
    assert len(versus) == 2 * len(WIDE_KS)  # two runs against base, at each k
    marks = ["k=", "/", "diff", "d_z", "t p", "rand p", "Holm"]
    for row in versus:
        assert offsets(row, marks) == offsets(versus[0], marks), row
        assert row.rindex("/") == versus[0].rindex("/"), row
