"""Import a collection's judgments (a TREC qrels file or a BEIR folder), one TREC run and/or its question tags
(retrieval_metrics/tagging.py) into the raw tables.

Judgments replace the collection's judgments, tags its tags; a run replaces that run only. Everything is written in one
transaction: on any error the database is left exactly as it was, and the InputError names the file and line
(or key) at fault. A clean run file is read, checked and ranked in one pass straight into raw.rankings; if that
pass meets a line it does not take, the transaction rolls back and the careful read (a temp table, checks that
name the line at fault) takes over. On a terminal a progress bar over the stages (parse, check, rank, write)
shows each stage's rows and rows/s on stderr.

Nothing imported can fail a later build's tests: where the collection has a corpus (Docent's seeds, or an
imported BEIR corpus) a run may rank only its documents, checked after the writes, in the same transaction
(check_ranked_docs), as the build's test of rankings against documents checks them. Nor is a question dropped
without a word: where the collection knows its questions (Docent's seeds, an imported BEIR folder's), a run
(check_ranked_questions) and TREC qrels (check_qrels_known) may name only those. A collection of TREC qrels and
runs only measures the questions its judgments name, as trec_eval does: the command says on a line of its own
how many of a run's questions that leaves out, and gives a hint when the run's rank and score columns look
swapped (run_notes). Replaced judgments are counted in the summary, before and after.

A run's ir_metadata block (the `# ir_metadata.start` ... `# ir_metadata.end` comment lines at its top) is kept,
as JSON, in raw.runs.ir_metadata; a run without one gets null. `-` as the run or the qrels (not both) reads it
from standard input: copied to a temporary file beside the database first (DuckDB reads files), removed after,
and named `<stdin>` in every error.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from retrieval_metrics import beir, tagging, tie_rules, trec
from retrieval_metrics.progress import Stages
from retrieval_metrics.raw_tables import Run, check_judged, replace_judgments, replace_run
from retrieval_metrics.scored_runs import (
    CHUNK_SEPARATOR,
    check_chunk_rule,
    collection_doc_ids,
    collection_question_ids,
    unknown_question,
    write_scored_run,
)
from retrieval_metrics.warehouse import (
    PROG,
    SEEDED_COLLECTION,
    InputError,
    check_identifier,
    connect,
    memory_limit,
    transaction,
)


@dataclass(frozen=True)
class ImportRequest:
    """What to import into one collection: judgments from qrels or a BEIR folder, and/or one run."""

    collection_id: str
    qrels: Path | None = None
    beir: Path | None = None
    split: str = "test"
    run: Path | None = None
    run_id: str | None = None
    chunk_rule: str | None = None  # the run's ids are chunks (doc#chunk): how a doc scores from them
    stdin: Path | None = None  # the temporary file that holds what `-` read from standard input (import_collection)
    tags: Path | None = None  # the questions' tags (retrieval_metrics/tagging.py): replace the collection's

    def check(self) -> None:
        """InputError for a request that cannot be carried out (a file missing, or a directory), before anything
        is read."""
        check_identifier("collection", self.collection_id)
        if not (self.qrels or self.beir or self.run or self.tags):
            raise InputError("nothing to import: give --qrels, --beir, --run and/or --tags")
        if self.qrels and self.beir:
            raise InputError("give --qrels or --beir, not both: each replaces the collection's judgments")
        if (self.qrels or self.beir) and self.collection_id == SEEDED_COLLECTION:
            raise InputError(f"collection {SEEDED_COLLECTION!r} is the lesson's seeds: its judgments live in seeds/")
        if self.tags and self.collection_id == SEEDED_COLLECTION:
            raise InputError(f"collection {SEEDED_COLLECTION!r} is the lesson's seeds: its tags live in "
                             "seeds/golden_question_tags.csv")  # fmt: skip
        if self.run_id is not None:
            check_identifier("run id", self.run_id)
        if bool(self.run) != (self.run_id is not None):
            raise InputError("--run and --run-id go together")
        if self.chunk_rule is not None and not self.run:
            raise InputError("--chunks goes with --run: it says how the run's chunks score their documents")
        check_chunk_rule(self.chunk_rule)
        if self.qrels == STDIN_ARG and self.run == STDIN_ARG:
            raise InputError("--qrels - and --run - both read standard input: give one of them as a file")
        if self.beir == STDIN_ARG:
            raise InputError("--beir names a folder; - (standard input) is for --qrels or --run")
        if self.tags == STDIN_ARG:
            raise InputError("--tags names a file; - (standard input) is for --qrels or --run")
        for path in (self.qrels, self.run, self.tags):
            if path is not None and path != STDIN_ARG:
                trec.check_file(path)
        if self.beir is not None:  # a missing part is parse_beir's to name, with what a BEIR folder holds
            for part in (*(self.beir / name for name, *_ in beir.JSON_FILES), beir.qrels_file(self.beir, self.split)):
                if part.is_dir():
                    raise InputError(f"{part} is a directory, not a file")


STDIN_ARG = Path("-")  # --run - or --qrels -: the file is read from standard input
STDIN = "<stdin>"  # how errors name it


@contextmanager
def reading_stdin(request: ImportRequest, database: Path) -> Iterator[ImportRequest]:
    """The request with `-` (its run or its qrels) replaced by a temporary file holding standard input, beside the
    database (a run may be large; the system's temporary folder if that one cannot be written), removed after.
    Every InputError names that file `<stdin>`. A request without `-` is given back as it is."""
    which = "run" if request.run == STDIN_ARG else "qrels" if request.qrels == STDIN_ARG else None
    if which is None:
        yield request
        return
    try:
        fd, name = tempfile.mkstemp(prefix=".import-stdin-", suffix=".txt", dir=database.parent)
    except OSError:
        fd, name = tempfile.mkstemp(prefix="import-stdin-", suffix=".txt")
    path = Path(name)
    try:
        with os.fdopen(fd, "wb") as spool:
            shutil.copyfileobj(sys.stdin.buffer, spool, 1 << 20)
        try:
            yield dataclasses.replace(request, **{which: path}, stdin=path)
        except InputError as exc:
            raise InputError(str(exc).replace(str(path), STDIN)) from None
    finally:
        path.unlink(missing_ok=True)


class CarefulReadNeeded(Exception):
    """The one-pass read of a run met a line it does not report on (or a repeated (question, doc) hash)."""


def import_collection(database: Path, request: ImportRequest, desc: str = "import") -> str:
    """Carry out the request in one transaction; returns the one-line summary of what was written."""
    request.check()
    with reading_stdin(request, database) as files:
        return import_files(database, files, desc)


def import_files(database: Path, request: ImportRequest, desc: str) -> str:
    """import_collection's work, once standard input (`-`) is a file too."""
    stage_names = ["parse", "check", *(["rank"] if request.run else []), "write"]
    tags = tagging.read_tags_file(request.tags) if request.tags else None
    with connect(database, config={"memory_limit": memory_limit()}) as con, Stages(stage_names, desc) as stages:
        # Judgments are parsed and checked into temp tables first (a failed read may abort a transaction).
        stages.begin("parse")
        rows = 0
        if request.qrels:
            rows = trec.parse_qrels(con, request.qrels)
        elif request.beir:
            rows = beir.parse_beir(con, request.beir, request.split)
        stages.count(rows)
        stages.begin("check", rows or None)
        if request.qrels:
            trec.check_qrels(con, request.qrels)
        elif request.beir:
            beir.check_beir(con, request.beir, request.split)
        notes: list[str] = []
        try:
            if request.chunk_rule:  # a chunk run takes the careful read, then the checks every scored run gets
                raise CarefulReadNeeded("a chunk run")
            with transaction(con):
                summary = write(con, request, stages, tags=tags, notes=notes)
        except CarefulReadNeeded:
            assert request.run is not None
            careful_rows = trec.read_run(con, request.run)
            notes.clear()
            with transaction(con):
                summary = write(con, request, stages, careful_rows, tags, notes)
    for note in notes:  # committed: each on its own line
        print(f"{PROG} import: {note}", file=sys.stderr, flush=True)
    return summary


def write(
    con: duckdb.DuckDBPyConnection,
    request: ImportRequest,
    stages: Stages | None = None,
    careful_rows: str | None = None,
    tags: list[tuple[str, str, str]] | None = None,
    notes: list[str] | None = None,
) -> str:
    """Write the checked judgments (temp tables qrels_in, and questions_in / documents_in for BEIR), the run and/or
    the questions' tags (tagging.read_tags_file's rows), in the current transaction. The run's rows come
    from the careful read's query (`careful_rows`), else from the file in one pass, which raises
    CarefulReadNeeded on any line it does not take. Returns the summary; `notes` gets the lines the command
    prints on their own (run_notes).
    """
    judged = bool(request.qrels or request.beir)
    collection_id = request.collection_id
    if not judged:
        check_judged(con, collection_id)
    summary: list[str] = []
    run_summary = None
    if request.run and request.run_id:
        if stages:
            stages.begin("rank")
        one_pass = careful_rows is None
        # one_pass_run checks that the file is there
        rows = trec.one_pass_run(con, request.run) if careful_rows is None else careful_rows
        tag = trec.run_tag(request.run)
        source = STDIN if request.run == request.stdin else request.run.name
        parameters = {"format": "trec", "source": source, "tag": tag}
        run = Run(collection_id, request.run_id, tag, parameters, trec.run_metadata(request.run))
        try:
            if request.chunk_rule:  # the chunks as given go to raw.chunk_rankings, their docs to raw.rankings
                n_rows = write_scored_run(con, run, rows, chunk_rule=request.chunk_rule, check_docs=False,
                                          check_questions=False)  # fmt: skip
            else:
                n_rows = replace_run(con, run, tie_rules.ranked_rows(con, collection_id, rows))
        except duckdb.Error as exc:
            if not one_pass:
                raise
            raise CarefulReadNeeded(str(exc)) from exc
        if one_pass and (n_rows == 0 or trec.has_repeated_pair(con, [collection_id, request.run_id])):
            raise CarefulReadNeeded("no rows, or a repeated (question, doc) hash")
        if stages:
            stages.count(n_rows)
        run_summary = f"run {request.run_id}: {n_rows} ranked docs"
        extra_text = trec.extra_text_lines(con)
        if extra_text:
            lines = "1 line" if extra_text == 1 else f"{extra_text} lines"
            run_summary += f" ({lines} carried text after the 6th field, ignored as trec_eval does)"
    if stages:
        stages.begin("write")
    if judged:
        is_beir = request.beir is not None
        if not is_beir:
            assert request.qrels is not None
            check_qrels_known(con, collection_id, request.qrels)
        counts = "select count(*), count(distinct question_id) from "
        before = con.execute(f"{counts} raw.qrels where collection_id = ?", [collection_id]).fetchone()
        replace_judgments(con, collection_id, "qrels_in", *(("questions_in", "documents_in") if is_beir else ()))
        n_qrels, n_questions = con.execute(f"{counts} qrels_in").fetchone()
        judgments = f"{n_qrels} judgments for {n_questions} questions"
        if before[0]:  # what the collection's base judgments were
            judgments += f", replacing {before[0]} judgments for {before[1]} questions"
        summary.append(judgments + unjudged_questions(con, collection_id))
        if is_beir:
            summary.append(f"{con.execute('select count(*) from documents_in').fetchone()[0]} documents")
    if tags is not None:
        n_tags = tagging.replace_tags(con, collection_id, tags)
        summary.append(f"{n_tags} tags of {len({question_id for question_id, _, _ in tags})} questions")
    elif judged:
        tagging.check_tagged_questions(con, collection_id)
    check_ranked_questions(con, request)
    check_ranked_docs(con, request)
    if run_summary:
        summary.append(run_summary)
        if notes is not None:
            notes.extend(run_notes(con, request))
    return "; ".join(summary)


def unjudged_questions(con: duckdb.DuckDBPyConnection, collection_id: str) -> str:
    """After TREC qrels replaced the judgments of a collection that knows its questions (they stay): how many of
    them have no judgment now, as a clause of the summary ('' if none)."""
    known = collection_question_ids(con, collection_id)
    if known is None:
        return ""
    n_known, n_unjudged = con.execute(
        f"select count(*), count(*) filter (where question_id not in "
        f"(select question_id from raw.qrels where collection_id = ?)) from ({known})",
        [collection_id],
    ).fetchone()
    if not n_unjudged:
        return ""
    has = "has" if n_unjudged == 1 else "have"
    return f" ({n_unjudged} of its {n_known} questions {has} no judgment now: each scores 0 until judged)"


def check_qrels_known(con: duckdb.DuckDBPyConnection, collection_id: str, qrels: Path) -> None:
    """InputError, naming the line, for a TREC qrels line (temp table qrels_in) whose question the collection
    does not know (if it knows its questions: Docent's seeds, an imported BEIR folder's), or whose doc its
    corpus lacks (if it has one): TREC qrels replace the judgments only, and the build tests both."""
    found = unknown_question(con, collection_id, "select question_id, doc_id from qrels_in")
    if found:
        line = trec.line_of(qrels, lambda parts: parts[0] == found[0])
        raise InputError(f"{trec.at(qrels, line)}: question {found[0]!r} is not a question of collection "
                         f"{collection_id!r}")  # fmt: skip
    known = collection_doc_ids(con, collection_id)
    if known is None:
        return
    found = con.execute(
        f"select question_id, doc_id from qrels_in as judged "
        f"where not exists (select 1 from ({known}) as docs where docs.doc_id = judged.doc_id) "
        "order by question_id, doc_id limit 1"
    ).fetchone()
    if found:
        line = trec.line_of(qrels, lambda parts: parts[:1] + parts[2:3] == list(found))
        raise InputError(f"{trec.at(qrels, line)}: doc {found[1]!r} is not a document of collection "
                         f"{collection_id!r}")  # fmt: skip


def check_ranked_questions(con: duckdb.DuckDBPyConnection, request: ImportRequest) -> None:
    """InputError, after the writes of the current transaction, if a run ranks for a question that its collection
    does not know, where it knows its questions (Docent's seeds, an imported BEIR folder's): the imported run,
    and with a BEIR folder (new questions) every run of the collection, the imported one first. The measures
    would leave such a question out without a word. One anti-join on the rankings; the line is looked up on the
    error path only."""
    if not (request.run or request.beir):
        return
    which = "" if request.beir else "and run_id = ?"
    found = unknown_question(
        con,
        request.collection_id,
        f"select run_id is distinct from ? as other_run, run_id, question_id, doc_id from raw.rankings "
        f"where collection_id = ? {which}",
        [request.run_id, request.collection_id, *([] if request.beir else [request.run_id])],
        order="other_run, run_id, question_id, doc_id",
    )
    if not found:
        return
    other_run, run_id, question_id, doc_id = found
    if request.run and not other_run:
        line = trec.line_of(request.run, lambda parts: parts[0] == question_id)
        raise InputError(f"{trec.at(request.run, line)}: question {question_id!r} is not a question of collection "
                         f"{request.collection_id!r}")  # fmt: skip
    assert request.beir is not None
    queries = request.beir / beir.JSON_FILES[1][0]
    raise InputError(
        f"{queries}: no question {question_id!r} judged in this split, which run {run_id!r} of collection "
        f"{request.collection_id!r} ranks (import that run again with this folder)"
    )


def run_notes(con: duckdb.DuckDBPyConnection, request: ImportRequest) -> list[str]:
    """The lines an imported run gets on their own: in a collection that does not know its questions (TREC qrels
    and runs only), how many of the run's questions have no judgment (not measured, as trec_eval does); and a
    hint when the file's rank and score columns look swapped (trec.swapped_columns)."""
    notes = []
    collection_id, run_id = request.collection_id, request.run_id
    if collection_question_ids(con, collection_id) is None:
        (unjudged,) = con.execute(
            """
            select count(*)
            from (select distinct question_id from raw.rankings where collection_id = $c and run_id = $r)
            where question_id not in (select question_id from raw.qrels where collection_id = $c
                union all select question_id from raw.judgments where collection_id = $c)
            """,
            {"c": collection_id, "r": run_id},
        ).fetchone()
        if unjudged:
            what = "1 question has" if unjudged == 1 else f"{unjudged} questions have"
            notes.append(f"run {run_id}: {what} no judgments in collection {collection_id}: not measured "
                         "(trec_eval does the same)")  # fmt: skip
    assert request.run is not None
    hint = trec.swapped_columns(con, request.run)
    if hint:
        notes.append(f"run {run_id}: hint: {hint}")
    return notes


def check_ranked_docs(con: duckdb.DuckDBPyConnection, request: ImportRequest) -> None:
    """InputError, after the writes of the current transaction, if a run ranks a doc that its collection's corpus
    does not have: the imported run, and with a BEIR folder (a new corpus) every run of the collection, the
    imported one first. A collection without a corpus is not checked, as the build's test leaves it out (its runs
    rank documents nobody listed). One anti-join on the rankings; the line is looked up on the error path only."""
    if not (request.run or request.beir):
        return
    known = collection_doc_ids(con, request.collection_id)
    if known is None:
        return
    which = "" if request.beir else "and run_id = ?"
    found = con.execute(
        f"""
        select run_id, question_id, doc_id from raw.rankings as ranked
        where collection_id = ? {which}
            and not exists (select 1 from ({known}) as docs where docs.doc_id = ranked.doc_id)
        order by run_id is distinct from ?, run_id, question_id, doc_id
        limit 1
        """,
        [request.collection_id, *([] if request.beir else [request.run_id]), request.run_id],
    ).fetchone()
    if not found:
        return
    run_id, question_id, doc_id = found
    if request.run and run_id == request.run_id:
        chunks = request.chunk_rule is not None

        def names_doc(parts: list[str]) -> bool:
            if len(parts) < 3 or parts[0] != question_id:
                return False
            return (parts[2].rpartition(CHUNK_SEPARATOR)[0] if chunks else parts[2]) == doc_id

        line = trec.line_of(request.run, names_doc)
        raise InputError(
            f"{trec.at(request.run, line)}: doc {doc_id!r} is not a document of collection {request.collection_id!r}"
        )
    assert request.beir is not None
    corpus = request.beir / beir.JSON_FILES[0][0]
    raise InputError(
        f"{corpus}: no doc {doc_id!r}, which run {run_id!r} of collection {request.collection_id!r} ranks for "
        f"question {question_id!r} (import that run again with this folder)"
    )
