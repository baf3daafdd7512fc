"""`retrieval-metrics export`: CSV / Parquet copies of the marts, and trec_eval's -q layout equal to pytrec_eval's."""

from __future__ import annotations

import math
import re
from pathlib import Path

import duckdb
import pytest
import pytrec_eval

from conftest import Warehouse, run_cli
from retrieval_metrics.cli import main as cli
from retrieval_metrics.export import TABLES
from trec_reference import (
    TREC_RBP,
    TREC_UNJ,
    Qrels,
    Settings,
    TrecRun,
    empty_ranking_values,
    trec_eval_rbp,
    trec_eval_unj,
    trec_order,
    warehouse_inputs,
)

pytestmark = pytest.mark.dbt

KS = [1, 2, 3]
# trec_eval's print order (te_trec_measures in its measures.c), for the measures the warehouse has; a measure
# with cutoffs prints one line per cutoff, ascending; iprec_at_recall prints its 11 levels
TREC_EVAL_ORDER = ["num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
                   "iprec_at_recall", "P", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg", "binG",
                   "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
                   "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid",
                   "unj"]  # fmt: skip
IPREC = "iprec_at_recall"
FAMILIES = (IPREC, "Rprec_mult")  # a family of measures without a cutoff: iprec_at_recall_0.50, Rprec_mult_0.20
ONLY_IN_ALL = {"num_q", "gm_map", "gm_bpref"}  # trec_eval -q prints these for `all` only
COUNTS = {"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}  # printed as integers ("%ld")
RUN = ["--collection", "docent", "--run-id", "keyword_overlap"]
# A graded collection where trec_eval's measures differ: several relevant docs and grades, grade 0 and negative
# judgments, unjudged docs retrieved, a question nothing relevant is retrieved for, one with nothing relevant at
# all, one missing from the run (-c: printed with the values of an empty ranking) and one the qrels lack (ignored)
GRADED_QRELS: Qrels = {
    "q1": {"a": 2, "b": 1, "c": 0, "d": 1},
    "q2": {"a": 0, "e": 3, "f": 1, "n": -1},
    "q3": {"g": 1},
    "q4": {"h": 2},
    "q5": {"i": 0},
}
GRADED_RANKINGS = {
    "q1": ["x", "b", "c", "a", "y", "d"],
    "q2": ["e", "n", "a", "z", "f"],
    "q3": ["j", "k"],
    "q5": ["i", "w"],
    "q9": ["a"],
}


@pytest.fixture(scope="module")
def built(lesson: Warehouse) -> Warehouse:
    """The shared lesson warehouse (keyword_overlap, built); exports only read it."""
    return lesson


@pytest.fixture(scope="module")
def graded(lesson: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    """The lesson's warehouse, copied, with the graded collection and its run "run" imported and built at KS."""
    folder = tmp_path_factory.mktemp("graded")
    warehouse = lesson.copy(folder)
    db = ["--db", str(warehouse.db_path)]
    qrels = folder / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, judged in GRADED_QRELS.items() for d, g in judged.items()))
    run = folder / "run.txt"
    run.write_text("".join(f"{q} Q0 {d} {rank} {100 - rank} run\n"
                           for q, docs in GRADED_RANKINGS.items() for rank, d in enumerate(docs, start=1)))
    assert cli(["import", "--collection", "graded", "--qrels", str(qrels), *db]) == 0
    assert cli(["import", "--collection", "graded", "--run", str(run), "--run-id", "run", *db]) == 0
    assert cli(["settings", "--collection", "graded", "--set", f"k_values={','.join(map(str, KS))}", *db]) == 0
    warehouse.build()
    return warehouse


def main(args: list[str]) -> int:
    return cli(["export", *args])


def trec_export(warehouse: Warehouse, collection_id: str, run_id: str, *args: str) -> str:
    result = run_cli("export", "--format", "trec", "--out", "-", "--db", str(warehouse.db_path),
                     "--collection", collection_id, "--run-id", run_id, *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def trec_text(built: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("trec") / "keyword_overlap.txt"
    assert main(["--format", "trec", "--out", str(out), "--db", str(built.db_path), *RUN]) == 0
    return out.read_text()


def parse(text: str) -> list[tuple[str, str, str]]:
    """Each line as (measure, qid, value), checking trec_eval's "%-22s\\t%s\\t..." layout on the way."""
    assert text.endswith("\n")
    rows = []
    for line in text.splitlines():
        padded, qid, value = line.split("\t")
        measure = padded.rstrip(" ")
        assert padded == f"{measure:<22}", line
        rows.append((measure, qid, value))
    return rows


@pytest.mark.parametrize("file_format", ["csv", "parquet", "jsonl"])
def test_files_round_trip_to_the_marts(built: Warehouse, tmp_path: Path, file_format: str) -> None:
    out = tmp_path / "exports" / "nested"  # created if missing
    args = ["--format", file_format, "--out", str(out), "--db", str(built.db_path)]
    assert main(args) == 0
    assert main([*args, *RUN]) == 0  # a re-run overwrites the files
    assert {"measure_catalog", "question_measures", "run_measures"} <= set(TABLES)
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{table}.{file_format}" for table in TABLES)
    reader = "read_parquet('{}')"
    if file_format == "csv":  # a quoted empty field is an empty string, an unquoted one null: as COPY wrote them
        reader = "read_csv('{}', header = true, allow_quoted_nulls = false)"
    if file_format == "jsonl":  # one object per row, its keys in the mart's column order, read as the mart's types
        reader = "read_json('{}', format = 'newline_delimited', columns = {})"
    with built.connect() as con:
        for table in TABLES:
            mart = con.execute(f"select * from main.{table} order by all")
            want_columns = [d[0] for d in mart.description]
            want = mart.fetchall()
            types = "{" + ", ".join(f"'{name}': '{kind}'" for name, kind, *_ in con.execute(
                f"describe main.{table}").fetchall()) + "}"  # fmt: skip
            exported = con.execute(f"select * from {reader.format(out / f'{table}.{file_format}', types)}")
            assert [d[0] for d in exported.description] == want_columns, table
            assert exported.fetchall() == want, table  # same values, same order
            assert want or table == "missed_relevant_docs"


def test_filters_keep_only_the_named_run(built: Warehouse, tmp_path: Path) -> None:
    for collection, expected_rows in (("docent", 27), ("other", None)):
        code = main(["--format", "csv", "--out", str(tmp_path / collection), "--db", str(built.db_path),
                     "--collection", collection])
        if expected_rows is None:
            assert code == 2 and not (tmp_path / collection).exists()
        else:
            assert code == 0
            with duckdb.connect() as con:
                path = tmp_path / collection / "question_metrics.csv"
                assert con.execute(f"select count(*) from read_csv('{path}')").fetchall() == [(expected_rows,)]
                (catalog,) = built.rows("select count(*) from measure_catalog")[0]
                path = tmp_path / collection / "measure_catalog.csv"  # not filtered: it has no collection
                assert con.execute(f"select count(*) from read_csv('{path}')").fetchall() == [(catalog,)]


def trec_eval_names(warehouse: Warehouse, collection_id: str, run_id: str) -> list[str]:
    """The run's trec_eval measure names (measure_catalog.reference), in trec_eval's print order."""
    names = warehouse.rows(
        "select measures.measure, measures.k, measures.measure_name from run_measures as measures "
        "inner join measure_catalog as catalog on measures.measure = catalog.measure "
        "where collection_id = ? and run_id = ? and catalog.reference = 'trec_eval'",
        [collection_id, run_id],
    )

    def position(row: tuple) -> tuple[int, int, str]:  # iprec_at_recall_0.50 is in the family iprec_at_recall
        measure, k, name = row
        family = next((family for family in FAMILIES if measure.startswith(f"{family}_")), measure)
        return (TREC_EVAL_ORDER.index(family), k or 0, name)

    return [name for *_, name in sorted(names, key=position)]


@pytest.mark.parametrize("collection_id, run_id", [("docent", "keyword_overlap"), ("graded", "run")])
def test_trec_layout(graded: Warehouse, collection_id: str, run_id: str) -> None:
    text = trec_export(graded, collection_id, run_id)
    rows = parse(text)
    names = trec_eval_names(graded, collection_id, run_id)
    catalog = graded.rows("select takes_cutoff from measure_catalog where reference = 'trec_eval' and is_default")
    assert {"P_2", "ndcg_cut_3", "map_cut_1", "success_3", "iprec_at_recall_0.50", "11pt_avg", "bpref", "set_F",
            "gm_map", "num_rel_ret"} <= set(names)
    assert len(names) == sum(len(KS) if takes_cutoff else 1 for (takes_cutoff,) in catalog)  # all, at every k
    per_question = [name for name in names if name not in ONLY_IN_ALL]
    averaged = sorted(q for (q,) in graded.rows(
        "select distinct question_id from question_measures where collection_id = ? and run_id = ? and is_averaged",
        [collection_id, run_id],
    ))
    questions = [qid for _, qid, _ in rows if qid != "all"]
    assert questions == [q for q in averaged for _ in per_question]  # sorted, each question's lines together
    for start in range(0, len(questions), len(per_question)):
        assert [m for m, _, _ in rows[start:start + len(per_question)]] == per_question
    assert [m for m, qid, _ in rows[len(questions):] if qid == "all"] == ["num_q", *names]
    assert len(rows) == len(questions) + 1 + len(names)
    for measure, _, value in rows:
        assert re.fullmatch(r"\d+" if measure in COUNTS else r"-?\d+\.\d{4}", value), (measure, value)  # utility < 0


def test_trec_all_lines_are_run_measures(graded: Warehouse) -> None:
    for collection_id, run_id in (("docent", "keyword_overlap"), ("graded", "run")):
        ours = {measure: value for measure, qid, value in parse(trec_export(graded, collection_id, run_id))
                if qid == "all"}
        run_measures = graded.rows(
            "select measure_name, value, aggregation, n_questions from run_measures "
            "where collection_id = ? and run_id = ? and measure in "
            "(select measure from measure_catalog where reference = 'trec_eval' and is_default)",
            [collection_id, run_id],
        )
        expected = {name: f"{value:.0f}" if aggregation == "sum" else f"{value:.4f}"
                    for name, value, aggregation, _ in run_measures}  # fmt: skip
        expected["num_q"] = str(run_measures[0][3])
        assert ours == expected
    assert ours["num_q"] == "5" and ours["num_rel"] == "7" and ours["num_ret"] == "15"  # graded: q9 is ignored


def pytrec_eval_values(con: duckdb.DuckDBPyConnection, collection_id: str, run_id: str) -> dict[str, dict[str, float]]:
    """pytrec_eval's value of every trec_eval measure of the catalog for every question the run averages, as
    trec_eval -c gives them (a question missing from the run: the values of an empty ranking)."""
    qrels = warehouse_inputs(con, collection_id, run_id)[0] if collection_id == "docent" else GRADED_QRELS
    run: TrecRun = {}
    for question_id, doc_id, rank in con.execute(
        "select question_id, doc_id, rank from raw.rankings where collection_id = ? and run_id = ?",
        [collection_id, run_id],
    ).fetchall():
        run.setdefault(question_id, {})[doc_id] = -float(rank)  # trec_eval's order is the warehouse's rank
    catalog = con.execute("select measure, takes_cutoff from measure_catalog "
                          "where reference = 'trec_eval' and is_default").fetchall()
    catalog = [(measure, takes_cutoff) for measure, takes_cutoff in catalog
               if measure not in [*TREC_RBP, TREC_UNJ]]  # not in pytrec_eval  # fmt: skip
    cutoffs = ",".join(map(str, KS))
    measures = {  # pytrec_eval's iprec_at_recall gives all 11 levels, Rprec_mult all 10 multiples
        f"{measure}.{cutoffs}" if takes_cutoff
        else next((family for family in FAMILIES if measure.startswith(family)), measure)
        for measure, takes_cutoff in catalog
    }
    assert {measure.split(".")[0] for measure in measures} <= set(pytrec_eval.supported_measures)
    evaluated = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    rankings = trec_order(run)
    for question_id, values in evaluated.items():  # rbp and unj: trec_eval 10.0's, transcribed (trec_reference)
        values.update(trec_eval_rbp(qrels[question_id], rankings[question_id], Settings().rbp_persistence))
        values.update(trec_eval_unj(qrels[question_id], rankings[question_id], KS))
    averaged = [q for (q,) in con.execute(
        "select distinct question_id from question_measures where collection_id = ? and run_id = ? and is_averaged",
        [collection_id, run_id],
    ).fetchall()]
    return {q: evaluated.get(q) or empty_ranking_values(qrels[q], KS, Settings()) for q in averaged}


@pytest.mark.parametrize("collection_id, run_id", [("docent", "keyword_overlap"), ("graded", "run")])
def test_trec_values_equal_pytrec_eval(graded: Warehouse, collection_id: str, run_id: str) -> None:
    with graded.connect() as con:
        reference = pytrec_eval_values(con, collection_id, run_id)
    names = trec_eval_names(graded, collection_id, run_id)

    def printed(measure: str, value: float) -> str:
        return f"{value:.0f}" if measure in COUNTS else f"{value:.4f}"

    expected = {(m, q): printed(m, values[m]) for q, values in reference.items() for m in names
                if m not in ONLY_IN_ALL}  # fmt: skip
    for measure in names:
        values = [reference[q][measure] for q in reference]
        if measure in ("gm_map", "gm_bpref"):  # per question ln(max(AP, 1e-5)); `all`: exp of their mean
            total = math.exp(sum(values) / len(values))
        else:
            total = sum(values) if measure in COUNTS else sum(values) / len(values)  # trec_eval -c
        expected[(measure, "all")] = printed(measure, total)
    expected[("num_q", "all")] = str(len(reference))
    rows = parse(trec_export(graded, collection_id, run_id))
    ours = {(measure, qid): value for measure, qid, value in rows}
    assert len(ours) == len(rows)  # no (measure, qid) twice
    assert ours == expected
    if collection_id == "graded":  # the cases are there: a miss, graded gains, -c's empty ranking
        assert reference.keys() == {"q1", "q2", "q3", "q4", "q5"}
        assert ours[("num_rel", "q4")] == "1" and ours[("num_ret", "q4")] == "0"
        assert len({ours[("ndcg_cut_3", q)] for q in reference}) >= 3
        assert 0 < float(ours[("bpref", "q1")]) < 1 and 0 < float(ours[("iprec_at_recall_0.50", "q1")]) < 1


def test_trec_digits_and_stdout(built: Warehouse, trec_text: str) -> None:
    command = ["export", "--format", "trec", "--out", "-", "--db", str(built.db_path), *RUN]
    default = run_cli(*command)
    assert (default.returncode, default.stdout) == (0, trec_text)  # stdout holds the trec text alone
    assert default.stderr.startswith(f"retrieval-metrics export: read {built.db_path}, as last written at ")
    assert default.stderr.count("\n") == 1
    six = run_cli(*command, "--digits", "6")
    assert f"{'P_3':<22}\tall\t0.296296" in six.stdout.splitlines()
    assert f"{'num_rel':<22}\tall\t9" in six.stdout.splitlines()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--format", "trec", "--collection", "docent"], "needs --collection and --run-id"),
        (["--format", "trec", "--run-id", "keyword_overlap"], "needs --collection and --run-id"),
        (["--format", "trec", *RUN[:3], "nope"], "no metrics for collection 'docent' run 'nope'"),
        (["--format", "parquet", "--collection", "nope"], "no metrics for collection 'nope'"),
        (["--format", "csv", "--run-id", "nope"], "no metrics for run 'nope'"),
        (["--format", "csv", "--db", "{tmp}/missing.duckdb"], "missing.duckdb does not exist"),
    ],
)
def test_errors_exit_2_with_one_line_and_write_nothing(
    built: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    out = tmp_path / "out"
    args = [arg.format(tmp=tmp_path) for arg in args]
    db = [] if "--db" in args else ["--db", str(built.db_path)]
    assert main([*args, "--out", str(out), *db]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("retrieval-metrics export: error: ") and captured.err.count("\n") == 1
    assert message in captured.err
    assert not out.exists()
