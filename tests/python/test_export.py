"""`retrieval-metrics export`: CSV / Parquet copies of the marts, and trec_eval's -q layout equal to pytrec_eval's."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
import pytrec_eval

from conftest import Warehouse, run_cli
from retrieval_metrics.cli import main as cli
from retrieval_metrics.export import TABLES
from trec_reference import warehouse_inputs

pytestmark = pytest.mark.dbt

KS = [1, 2, 3]
TREC_MEASURES = {"num_ret", "num_rel", "map", "Rprec", "recip_rank"} | {
    f"{name}.{','.join(map(str, KS))}" for name in ("P", "recall", "ndcg_cut", "success")
}
PER_QUESTION_ORDER = ["num_ret", "num_rel", "map", "Rprec", "recip_rank"] + [
    f"{name}_{k}" for name in ("P", "recall", "ndcg_cut", "success") for k in KS
]
RUN = ["--collection", "docent", "--run-id", "keyword_overlap"]


@pytest.fixture(scope="module")
def built(lesson: Warehouse) -> Warehouse:
    """The shared lesson warehouse (keyword_overlap, built); exports only read it."""
    return lesson


def main(args: list[str]) -> int:
    return cli(["export", *args])


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


@pytest.mark.parametrize("file_format", ["csv", "parquet"])
def test_files_round_trip_to_the_marts(built: Warehouse, tmp_path: Path, file_format: str) -> None:
    out = tmp_path / "exports" / "nested"  # created if missing
    args = ["--format", file_format, "--out", str(out), "--db", str(built.db_path)]
    assert main(args) == 0
    assert main([*args, *RUN]) == 0  # a re-run overwrites the files
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{table}.{file_format}" for table in TABLES)
    reader = "read_parquet('{}')"
    if file_format == "csv":  # a quoted empty field is an empty string, an unquoted one null: as COPY wrote them
        reader = "read_csv('{}', header = true, allow_quoted_nulls = false)"
    with built.connect() as con:
        for table in TABLES:
            mart = con.execute(f"select * from main.{table} order by all")
            want_columns = [d[0] for d in mart.description]
            want = mart.fetchall()
            exported = con.execute(f"select * from {reader.format(out / f'{table}.{file_format}')}")
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


def test_trec_layout(trec_text: str) -> None:
    rows = parse(trec_text)
    lines = trec_text.splitlines()
    assert f"{'P_2':<22}\tfree_plan_cost\t0.0000" in lines
    assert f"{'recip_rank':<22}\tall\t0.8000" in lines
    assert f"{'num_q':<22}\tall\t9" in lines
    questions = [qid for _, qid, _ in rows if qid != "all"]
    assert len(questions) == 9 * len(PER_QUESTION_ORDER)
    assert questions == sorted(questions)  # questions sorted, each one's lines together
    for start in range(0, len(questions), len(PER_QUESTION_ORDER)):
        assert [m for m, _, _ in rows[start:start + len(PER_QUESTION_ORDER)]] == PER_QUESTION_ORDER
    assert [m for m, qid, _ in rows[len(questions):] if qid == "all"] == ["num_q", *PER_QUESTION_ORDER]


def test_trec_values_equal_pytrec_eval(built: Warehouse, trec_text: str) -> None:
    with built.connect() as con:
        qrels, run = warehouse_inputs(con, "docent", "keyword_overlap")
    reference = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(run)

    def printed(measure: str, value: float) -> str:
        return str(int(value)) if measure.startswith("num_") else f"{value:.4f}"

    expected = {(m, q): printed(m, v) for q, values in reference.items() for m, v in values.items()}
    for measure in PER_QUESTION_ORDER:
        values = [reference[q][measure] for q in reference]
        total = sum(values) if measure.startswith("num_") else sum(values) / len(values)  # trec_eval -c
        expected[(measure, "all")] = printed(measure, total)
    expected[("num_q", "all")] = str(len(reference))
    ours = {(measure, qid): value for measure, qid, value in parse(trec_text)}
    assert len(ours) == len(parse(trec_text))  # no (measure, qid) twice
    assert ours == expected


def test_trec_digits_and_stdout(built: Warehouse, trec_text: str) -> None:
    command = ["export", "--format", "trec", "--out", "-", "--db", str(built.db_path), *RUN]
    default = run_cli(*command)
    assert (default.returncode, default.stdout, default.stderr) == (0, trec_text, "")
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
