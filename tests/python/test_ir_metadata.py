"""What trec_eval 10.0 reads, we read (issue 28): a run's ir_metadata block is kept as the run's metadata and served
beside its retriever; `-` reads a run or a qrels file from standard input. Comment lines themselves are in
test_bad_input.py (C).

The imports run in-process (cli.main), except those that pipe standard input (a child process, as a user runs
it); one test builds.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from conftest import REPO_ROOT, Warehouse, cli_env, warehouse_checksums
from retrieval_metrics import api, trec
from retrieval_metrics.cli import main
from retrieval_metrics.settings import project_defaults
from retrieval_metrics.warehouse import InputError

ERROR = "retrieval-metrics import: error: "

# As ir_metadata writes it (repro_eval's MetadataHandler.write_metadata: `# ` before each YAML line, a blank
# after it), with a date, which YAML reads as one
BLOCK = "".join(
    f"# {line} \n"
    for line in [
        "ir_metadata.start", "tag: bm25-tuned", "actor:", "  team: example", "  name: Jane Doe", "research goal:",
        "  description: BM25, k1 = 0.9, b = 0.4", "date: 2026-03-01", "platform:", "  software:", "    libraries:",
        "      - pyserini: 0.22.1", "ir_metadata.end",
    ]
)  # fmt: skip
METADATA = {
    "tag": "bm25-tuned",
    "actor": {"team": "example", "name": "Jane Doe"},
    "research goal": {"description": "BM25, k1 = 0.9, b = 0.4"},
    "date": "2026-03-01",
    "platform": {"software": {"libraries": [{"pyserini": "0.22.1"}]}},
}
QRELS = "1 0 d1 1\n1 0 d2 2\n1 0 d3 0\n2 0 d1 1\n"
RUN = "1 Q0 d3 1 1.0 bm25\n1 Q0 d1 2 1.0 bm25\n1 Q0 d2 3 0.5 bm25\n2 Q0 d1 1 3 bm25\n"


def import_(db: Path, *args: str) -> int:
    """`retrieval-metrics import ARGS --db DB`, in-process."""
    return main(["import", *args, "--db", str(db)])


def piped(db: Path, stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`retrieval-metrics import ARGS` in a child process, `stdin` on its standard input."""
    return subprocess.run(
        [sys.executable, "-m", "retrieval_metrics", "import", *args],
        input=stdin, capture_output=True, text=True, env=cli_env(db), cwd=REPO_ROOT, timeout=300, check=False,
    )  # fmt: skip


def stored(db: Path) -> dict[str, object]:
    """run id -> its raw.runs.ir_metadata, read as JSON (None: null)."""
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("select run_id, ir_metadata from raw.runs order by run_id").fetchall()
    return {run_id: None if text is None else json.loads(text) for run_id, text in rows}


def raw_columns(db: Path) -> list[str]:
    with duckdb.connect(str(db), read_only=True) as con:
        columns = con.execute(
            "select column_name from duckdb_columns() where schema_name = 'raw' and table_name = 'runs'"
        )
        return [name for (name,) in columns.fetchall()]


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """A new warehouse with collection tiny's judgments (QRELS): its database file."""
    (tmp_path / "qrels.txt").write_text(QRELS)
    db = tmp_path / "warehouse.duckdb"
    assert import_(db, "--collection", "tiny", "--qrels", str(tmp_path / "qrels.txt")) == 0
    return db


# --- the block, read -------------------------------------------------------------------------------------------


def test_the_block_is_read_as_ir_metadata_writes_it(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text(BLOCK + RUN)
    assert trec.run_metadata(path) == {**METADATA, "date": datetime.date(2026, 3, 1)}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (RUN, None),  # no block
        ("# a comment first\n\n" + BLOCK.replace("\n", "\r\n") + RUN, "METADATA"),  # after a comment; CRLF
        ("#ir_metadata.start\n#tag: x\n#a:\n#  b: [1, 2]\n#\n#ir_metadata.end\n" + RUN,
         {"tag": "x", "a": {"b": [1, 2]}}),
        ("# ir_metadata.start\n# tag: x\n\n# n: 2\n  # ir_metadata.end\n" + RUN, {"tag": "x", "n": 2}),  # a blank line
        (RUN + BLOCK, None),  # a block after the run's first line is a comment like any other
    ],
    ids=["none", "after a comment, CRLF", "no blank after #", "a blank line inside, an indented end", "after the run"],
)
def test_where_a_block_may_stand(tmp_path: Path, text: str, expected: object) -> None:
    path = tmp_path / "run.txt"
    path.write_bytes(text.encode())
    found = trec.run_metadata(path)
    if expected == "METADATA":
        assert found is not None and json.loads(json.dumps(found, default=str)) == METADATA
    else:
        assert found == expected


# --- imported --------------------------------------------------------------------------------------------------


def test_an_imported_block_is_the_runs_metadata_and_a_run_without_one_has_null(tiny: Path, tmp_path: Path) -> None:
    (tmp_path / "plain.txt").write_text(RUN)
    (tmp_path / "described.txt").write_text(BLOCK + RUN)
    assert import_(tiny, "--collection", "tiny", "--run", str(tmp_path / "plain.txt"), "--run-id", "plain") == 0
    assert "ir_metadata" not in raw_columns(tiny)  # a warehouse gains the column with its first block
    assert import_(tiny, "--collection", "tiny", "--run", str(tmp_path / "described.txt"), "--run-id", "meta") == 0
    assert stored(tiny) == {"meta": METADATA, "plain": None}
    with duckdb.connect(str(tiny), read_only=True) as con:
        ranked = "select question_id, doc_id, rank, score from raw.rankings where run_id = ? order by all"
        assert con.execute(ranked, ["meta"]).fetchall() == con.execute(ranked, ["plain"]).fetchall()
        assert con.execute("select retriever, json_extract_string(ir_metadata, '$.actor.team') from raw.runs "
                           "where run_id = 'meta'").fetchall() == [("bm25", "example")]  # fmt: skip
    # re-imported without its block, the run loses its metadata
    assert import_(tiny, "--collection", "tiny", "--run", str(tmp_path / "plain.txt"), "--run-id", "meta") == 0
    assert stored(tiny) == {"meta": None, "plain": None}


def test_write_run_records_a_mapping_as_ir_metadata(tiny: Path) -> None:
    rows = [("1", "d1", 2.0), ("1", "d2", 1.0)]
    api.write_run("tiny", "py", rows, ir_metadata={"tag": "py", "date": datetime.date(2026, 3, 1)}, database=tiny)
    assert stored(tiny) == {"py": {"tag": "py", "date": "2026-03-01"}}
    with pytest.raises(InputError, match="ir_metadata cannot be stored as JSON"):
        api.write_run("tiny", "py", rows, ir_metadata={"score": float("nan")}, database=tiny)
    assert stored(tiny) == {"py": {"tag": "py", "date": "2026-03-01"}}


# The block's lines: 1 opens it. Each bad block is followed by the run's lines.
BAD_BLOCKS = [
    ("# ir_metadata.start\n# tag: x\n# actor:\n#   team: y\n",
     "run.txt:1: ir_metadata block has no `# ir_metadata.end` line before the run's lines"),
    ("# ir_metadata.start\n# tag: x\n# actor: [unclosed\n# other: 1\n# ir_metadata.end\n",
     "run.txt:4: ir_metadata block is not valid YAML: "),
    ("# ir_metadata.start\n# tag: x\n#  bad: indentation\n# ir_metadata.end\n",
     "run.txt:3: ir_metadata block is not valid YAML: "),
    ("# ir_metadata.start\n# - tag\n# - x\n# ir_metadata.end\n",
     "run.txt:1: ir_metadata block is a list, not a mapping of `key: value` lines"),
    ("# a comment\n# ir_metadata.start\n# just text\n# ir_metadata.end\n",
     "run.txt:2: ir_metadata block is a string, not a mapping of `key: value` lines"),
    ("# ir_metadata.start\n# ir_metadata.end\n", "run.txt:1: ir_metadata block is empty, not a mapping"),
    ("# ir_metadata.start\n# score: .nan\n# ir_metadata.end\n",
     "run.txt:1: ir_metadata block cannot be stored as JSON: "),
]  # fmt: skip


@pytest.mark.parametrize(("block", "message"), BAD_BLOCKS, ids=[m.partition(": ")[2][:48] for _, m in BAD_BLOCKS])
def test_a_malformed_block_is_refused_naming_the_line_with_nothing_written(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], block: str, message: str
) -> None:
    (tmp_path / "good.txt").write_text(BLOCK + RUN)
    assert import_(tiny, "--collection", "tiny", "--run", str(tmp_path / "good.txt"), "--run-id", "r") == 0
    capsys.readouterr()
    before = warehouse_checksums(tiny)
    path = tmp_path / "bad" / "run.txt"
    path.parent.mkdir()
    path.write_text(block + RUN)
    assert import_(tiny, "--collection", "tiny", "--run", str(path), "--run-id", "r") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"{ERROR}{path.parent}/{message}"), err
    assert warehouse_checksums(tiny) == before


# --- standard input --------------------------------------------------------------------------------------------


def test_a_run_and_qrels_piped_in_import_as_the_files_do(tmp_path: Path) -> None:
    files, pipes = tmp_path / "files", tmp_path / "pipes"
    files.mkdir()
    pipes.mkdir()
    (files / "qrels.txt").write_text(QRELS)
    (files / "run.txt").write_text(BLOCK + RUN)
    from_files, from_pipes = files / "warehouse.duckdb", pipes / "warehouse.duckdb"
    assert import_(from_files, "--collection", "tiny", "--qrels", str(files / "qrels.txt")) == 0
    assert import_(from_files, "--collection", "tiny", "--run", str(files / "run.txt"), "--run-id", "r") == 0
    for stdin, args in [(QRELS, ["--qrels", "-"]), (BLOCK + RUN, ["--run", "-", "--run-id", "r"])]:
        result = piped(from_pipes, stdin, "--collection", "tiny", *args)
        assert result.returncode == 0, result.stderr
    assert result.stdout == "retrieval-metrics import: collection tiny: run r: 4 ranked docs\n"

    def rows(db: Path) -> dict[str, list[tuple[object, ...]]]:
        with duckdb.connect(str(db), read_only=True) as con:
            return {
                "qrels": con.execute("select * from raw.qrels order by all").fetchall(),
                "rankings": con.execute("select * from raw.rankings order by all").fetchall(),
                "runs": con.execute(
                    "select collection_id, run_id, retriever, parameters::json->>'$.tag', ir_metadata "
                    "from raw.runs order by all"
                ).fetchall(),
            }

    assert rows(from_pipes) == rows(from_files)
    assert stored(from_pipes) == {"r": METADATA}
    with duckdb.connect(str(from_pipes), read_only=True) as con:
        (parameters,) = con.execute("select parameters from raw.runs").fetchone()
    assert json.loads(parameters)["source"] == "<stdin>"
    assert sorted(p.name for p in pipes.iterdir() if "stdin" in p.name) == []  # the copy of stdin is gone


@pytest.mark.parametrize(
    ("stdin", "args", "message"),
    [
        ("1 Q0 d1 1 1 t\n# a comment\n1 Q0 d2 2 high t\n", ["--run", "-", "--run-id", "r"],
         "<stdin>:3: score 'high' is not a number"),
        ("1 0 d1 1\n1 0 d2\n", ["--qrels", "-"], "<stdin>:2: expected 4 fields"),
        ("# ir_metadata.start\n# tag: [x\n1 Q0 d1 1 1 t\n", ["--run", "-", "--run-id", "r"],
         "<stdin>:1: ir_metadata block has no `# ir_metadata.end` line"),
        ("", ["--run", "-", "--run-id", "r"], "<stdin>: empty file"),
        (QRELS, ["--qrels", "-", "--run", "-", "--run-id", "r"], "--qrels - and --run - both read standard input"),
        (RUN, ["--run", "-"], "--run and --run-id go together"),
    ],
    ids=["bad score", "short qrels line", "no end line", "nothing", "both", "no run id"],
)  # fmt: skip
def test_errors_name_standard_input_and_its_line(tiny: Path, stdin: str, args: list[str], message: str) -> None:
    before = warehouse_checksums(tiny)
    result = piped(tiny, stdin, "--collection", "tiny", *args)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(ERROR + message), result.stderr
    assert warehouse_checksums(tiny) == before
    assert [p.name for p in tiny.parent.iterdir() if "stdin" in p.name] == []


# --- built -----------------------------------------------------------------------------------------------------


@pytest.mark.dbt
def test_the_metadata_is_served_beside_the_retriever(lesson: Warehouse, tmp_path: Path) -> None:
    """A lesson warehouse (whose raw.runs has no ir_metadata column: its build read null) gets a run with a block
    and one without; after the build run_metrics serves each run's metadata beside its retriever."""
    warehouse = lesson.copy(tmp_path / "lesson")
    assert "ir_metadata" not in raw_columns(warehouse.db_path)
    assert warehouse.rows("select distinct ir_metadata from run_metrics") == [(None,)]  # the lesson's build
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "described.txt").write_text(BLOCK + RUN)
    (tmp_path / "plain.txt").write_text(RUN)
    db = warehouse.db_path
    assert import_(db, "--collection", "tiny", "--qrels", str(tmp_path / "qrels.txt")) == 0
    assert import_(db, "--collection", "tiny", "--run", str(tmp_path / "described.txt"), "--run-id", "meta") == 0
    assert import_(db, "--collection", "tiny", "--run", str(tmp_path / "plain.txt"), "--run-id", "plain") == 0
    warehouse.build("--select", "source:raw+")
    rows = warehouse.rows(
        """
        select run_id, retriever, count(*), count(distinct ir_metadata), any_value(ir_metadata),
            any_value(json_extract_string(ir_metadata, '$.actor.team')),
            any_value(json_extract_string(ir_metadata, '$.research goal.description'))
        from run_metrics group by all order by run_id
        """
    )
    docent_ks, tiny_ks = 3, len(project_defaults()["k_values"])  # Docent's seed's k = 1, 2, 3; tiny's: the var's
    assert [row[:4] for row in rows] == [
        ("keyword_overlap", "keyword_overlap", docent_ks, 0),
        ("meta", "bm25", tiny_ks, 1),  # the same metadata at every k
        ("plain", "bm25", tiny_ks, 0),
    ]
    assert json.loads(rows[1][4]) == METADATA
    assert rows[1][5:] == ("example", "BM25, k1 = 0.9, b = 0.4")
    assert warehouse.rows("select run_id, ir_metadata is null from staging.stg_raw__runs order by 1") == [
        ("keyword_overlap", True), ("meta", False), ("plain", True)]  # fmt: skip
