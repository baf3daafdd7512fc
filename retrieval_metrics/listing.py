"""What the warehouse holds, without SQL: its collections and their runs (`retrieval-metrics list`).

    retrieval-metrics list                        # every collection, then every run
    retrieval-metrics list --collection C         # one collection and its runs
    retrieval-metrics list --json                 # the same as one JSON document

A collection: its documents, questions (with a text, or named by its base judgments), judgments (judged
question-document pairs, any qrels version) and qrels versions (0: the judgments it was imported with, or
Docent's seeds; then one per `import --judgments` or `judge`), its preset and baseline runs as the next build uses
them. A run: its retriever, parameters, ranking rows, questions answered, when it was written (raw.runs.created_at,
UTC; run_metrics and run_leaderboard serve it as written_at), and whether it is built (its rows as written now
are in the build's run_metrics).

It reads the build database's raw tables, read-only: what is there now, built or not (the serving copy has only
what the last build published, and none of the raw tables). Docent's documents, questions and judgments are its
seed files. A writer holds the build database while it runs: then `list` says so in one line. Runs are listed
in the order they were written within each collection; collections by id.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

import duckdb

from retrieval_metrics.collections import seed_file
from retrieval_metrics.setting_definitions import BY_NAME
from retrieval_metrics.settings import project_defaults
from retrieval_metrics.warehouse import (
    LOCK_HOLDER,
    PROG,
    SEEDED_COLLECTION,
    InputError,
    connect,
    database_error,
    process_command,
    shown,
    sql_literal,
)

PARAMETERS_SHOWN = 60  # characters of a run's parameters in the plain listing (--json has them whole)

# the raw tables the listing reads, with the columns it reads: a warehouse written before one of them existed
# reads it as empty
RAW_COLUMNS = {
    "runs": "collection_id, run_id, retriever, parameters, created_at",
    "rankings": "collection_id, run_id, question_id",
    "documents": "collection_id, doc_id",
    "questions": "collection_id, question_id",
    "qrels": "collection_id, question_id, doc_id",
    "judgments": "collection_id, qrels_version, question_id, doc_id",
    "collection_settings": "collection_id, setting, value",
}
RAW_TYPES = {"created_at": "timestamp", "qrels_version": "integer"}


@dataclass(frozen=True)
class RunEntry:
    run_id: str
    retriever: str
    parameters: dict[str, object]
    rows: int
    questions_answered: int
    written_at: datetime
    built: bool


@dataclass(frozen=True)
class CollectionEntry:
    collection_id: str
    documents: int
    questions: int
    judgments: int
    qrels_versions: list[int]
    preset: str | None
    baseline_run_id: str | None  # the baseline runs, by run id, ", "-joined; None for none
    runs: list[RunEntry] = field(default_factory=list)


def raw_table(con: duckdb.DuckDBPyConnection, table: str) -> str:
    """raw.<table>'s columns the listing reads, or no rows of them where the warehouse lacks the table."""
    columns = RAW_COLUMNS[table]
    (present,) = con.execute("select count(*) from duckdb_tables() where database_name = current_database() "
                             "and schema_name = 'raw' and table_name = ?", [table]).fetchone() or (0,)  # fmt: skip
    if present:
        return f"(select {columns} from raw.{table})"
    nulls = ", ".join(f"cast(null as {RAW_TYPES.get(c.strip(), 'varchar')}) as {c.strip()}" for c in columns.split(","))
    return f"(select {nulls} limit 0)"


def seed_sql(name: str, columns: str) -> str:
    """Docent's rows of a seed file (every value text), or none when the project has no such file."""
    path = seed_file(name)
    if not path.is_file():
        return f"(select {', '.join(f'cast(null as varchar) as {c.strip()}' for c in columns.split(','))} limit 0)"
    return f"(select {columns} from read_csv({sql_literal(path)}, header = true, all_varchar = true))"


def built_sql(con: duckdb.DuckDBPyConnection) -> str:
    """Whether a run (raw.runs as `runs`) is built: its rows as written now are in the build's run_metrics (by
    written_at; by presence in a run_metrics built before it had that column); false before any build."""
    columns = {c for (c,) in con.execute(
        "select column_name from duckdb_columns() where database_name = current_database() and schema_name = 'main' "
        "and table_name = 'run_metrics'").fetchall()}  # fmt: skip
    if not columns:
        return "false"
    same_version = " and built.written_at = runs.created_at" if "written_at" in columns else ""
    return (f"exists (select 1 from main.run_metrics as built where built.collection_id = runs.collection_id "
            f"and built.run_id = runs.run_id{same_version})")  # fmt: skip


def read_listing(con: duckdb.DuckDBPyConnection) -> list[CollectionEntry]:
    """Every collection the warehouse holds anything of (a run, judgments, documents, questions or settings), by
    id, each with its runs in the order they were written."""
    raw = {table: raw_table(con, table) for table in RAW_COLUMNS}
    docent = sql_literal(SEEDED_COLLECTION)
    default_baseline = ", ".join(BY_NAME["baseline_run_id"].rule.store(project_defaults().get("baseline_run_id")))
    collections = con.execute(f"""
        with held as (
            select collection_id from {raw['runs']}
            union select collection_id from {raw['qrels']}
            union select collection_id from {raw['documents']}
            union select collection_id from {raw['questions']}
            union select collection_id from {raw['judgments']}
            union select collection_id from {raw['collection_settings']}
        ),
        documents as (
            select collection_id, count(distinct doc_id) as n from {raw['documents']} group by collection_id
            union all select {docent}, count(*) from {seed_sql('docs', 'doc_id')}
        ),
        -- the questions it has texts of, and those its base judgments name (all of a TREC-only collection's)
        questions as (
            select collection_id, count(*) as n
            from (
                select collection_id, question_id from {raw['questions']}
                union select collection_id, question_id from {raw['qrels']}
                union select {docent}, question_id from {seed_sql('golden_questions', 'question_id')}
                union select {docent}, question_id from {seed_sql('golden_qrels', 'question_id')}
            )
            group by collection_id
        ),
        judged as (
            select collection_id, count(*) as n
            from (
                select collection_id, question_id, doc_id from {raw['qrels']}
                union select {docent}, question_id, doc_id from {seed_sql('golden_qrels', 'question_id, doc_id')}
                union select collection_id, question_id, doc_id from {raw['judgments']}
            )
            group by collection_id
        ),
        versions as (
            select collection_id, max(qrels_version) as latest from {raw['judgments']} group by collection_id
        ),
        -- a setting's values: the collection's own (`settings`), else the seed's (the shipped collections'); the
        -- baselines as one list
        settings as (
            select collection_id, setting, string_agg(value, ', ' order by value) as value
            from (
                select *, min(source) over (partition by collection_id, setting) as first_source
                from (
                    select collection_id, setting, value, 1 as source from {raw['collection_settings']}
                    union all
                    select collection_id, setting, value, 2
                    from {seed_sql('collection_settings', 'collection_id, setting, value')}
                )
                where setting in ('preset', 'baseline_run_id')
            )
            where source = first_source
            group by collection_id, setting
        )
        select
            held.collection_id,
            coalesce(documents.n, 0),
            coalesce(questions.n, 0),
            coalesce(judged.n, 0),
            coalesce(versions.latest, 0),
            preset.value,
            nullif(coalesce(baseline.value, ?), 'none')
        from held
        left join documents on held.collection_id = documents.collection_id
        left join questions on held.collection_id = questions.collection_id
        left join judged on held.collection_id = judged.collection_id
        left join versions on held.collection_id = versions.collection_id
        left join settings as preset on held.collection_id = preset.collection_id and preset.setting = 'preset'
        left join settings as baseline
            on held.collection_id = baseline.collection_id and baseline.setting = 'baseline_run_id'
        order by held.collection_id
        """, [default_baseline]).fetchall()  # fmt: skip
    runs = con.execute(f"""
        with rows as (
            select collection_id, run_id, count(*) as n_rows, count(distinct question_id) as n_questions
            from {raw['rankings']}
            group by collection_id, run_id
        )
        select runs.collection_id, runs.run_id, runs.retriever, runs.parameters,
            coalesce(rows.n_rows, 0), coalesce(rows.n_questions, 0), runs.created_at, {built_sql(con)}
        from {raw['runs']} as runs
        left join rows on runs.collection_id = rows.collection_id and runs.run_id = rows.run_id
        order by runs.collection_id, runs.created_at, runs.run_id
        """).fetchall()  # fmt: skip
    listing = [CollectionEntry(c, int(d), int(q), int(j), list(range(int(v) + 1)), p, b)
               for c, d, q, j, v, p, b in collections]  # fmt: skip
    by_id = {entry.collection_id: entry for entry in listing}
    for collection_id, run_id, retriever, parameters, n_rows, n_questions, written, built in runs:
        by_id[collection_id].runs.append(
            RunEntry(run_id, retriever, parsed(parameters), int(n_rows), int(n_questions), written, bool(built))
        )
    return listing


def parsed(parameters: str | None) -> dict[str, object]:
    """raw.runs.parameters (a JSON object in text) as a dict; {} for none."""
    try:
        value = json.loads(parameters or "{}")
    except json.JSONDecodeError:
        return {"text": parameters}
    return value if isinstance(value, dict) else {"value": value}


def open_build_database(path: Path) -> duckdb.DuckDBPyConnection:
    """The build database, read-only; InputError in one line if it does not exist, or a writer holds it."""
    if not path.exists():
        raise InputError(f"{shown(path)} does not exist: nothing written yet; `{PROG} rank --retriever bm25` ranks "
                         f"the lesson's questions, `{PROG} import --collection C --beir DIR` brings your own")  # fmt: skip
    try:
        return connect(path, read_only=True)
    except duckdb.IOException as exc:
        match = LOCK_HOLDER.search(str(exc))
        if match is None:
            raise InputError(database_error(path, exc)) from None
        pid = int(match["pid"])
        raise InputError(f"{shown(path)} is being written by PID {pid} ({process_command(pid, match['exe'])}): "
                         "list again when it is done (list reads the raw tables, which only the build database "
                         "holds)") from None


def list_warehouse(path: Path, collection_id: str | None = None, as_json: bool = False) -> str:
    """The listing of the warehouse at `path` (only `collection_id`, if given): aligned tables, or one JSON
    document. InputError, naming the collections there are, for a collection it does not hold."""
    with open_build_database(path) as con:
        listing = read_listing(con)
    if collection_id is not None:
        chosen = [entry for entry in listing if entry.collection_id == collection_id]
        if not chosen:
            there = ", ".join(entry.collection_id for entry in listing) or "none yet"
            raise InputError(f"no collection {collection_id!r} in {shown(path)} (its collections: {there})")
        listing = chosen
    if as_json:
        return json.dumps({"database": str(path), "collections": [asdict(entry) for entry in listing]},
                          indent=2, ensure_ascii=False, default=lambda t: t.isoformat())  # fmt: skip
    if not listing:
        return (f"nothing in {shown(path)} yet: `{PROG} rank --retriever bm25` ranks the lesson's questions, "
                f"`{PROG} import --collection C --beir DIR` brings your own")  # fmt: skip
    return plain(path, listing)


def aligned(header: list[str], body: list[list[str]], numeric: set[int]) -> list[str]:
    """Rows as text columns two spaces apart: numbers right-aligned, text left-aligned, no trailing blanks."""
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    return ["  ".join(cell.rjust(w) if i in numeric else cell.ljust(w) for i, (cell, w) in
                      enumerate(zip(row, widths))).rstrip() for row in [header, *body]]  # fmt: skip


def plain(path: Path, listing: list[CollectionEntry]) -> str:
    """The listing as two aligned tables: the collections, then their runs."""
    runs = [(entry.collection_id, run) for entry in listing for run in entry.runs]
    built = sum(run.built for _, run in runs)
    lines = [f"{shown(path)}: {len(listing)} collection{'s' * (len(listing) != 1)}, {len(runs)} "
             f"run{'s' * (len(runs) != 1)} ({built} built)", ""]  # fmt: skip
    lines += aligned(
        ["collection", "documents", "questions", "judgments", "qrels versions", "preset", "baseline"],
        [[e.collection_id, str(e.documents), str(e.questions), str(e.judgments),
          f"0-{e.qrels_versions[-1]}" if len(e.qrels_versions) > 1 else "0", e.preset or "none",
          ", ".join(run + ("" if any(r.run_id == run for r in e.runs) else " (no such run)")
                    for run in e.baseline_run_id.split(", ")) if e.baseline_run_id else "none"]
         for e in listing],
        {1, 2, 3, 4},
    )  # fmt: skip
    if runs:
        lines.append("")
        lines += aligned(
            ["collection", "run", "retriever", "rows", "questions", "written at (UTC)", "built", "parameters"],
            [[c, r.run_id, r.retriever, str(r.rows), str(r.questions_answered), f"{r.written_at:%Y-%m-%d %H:%M:%S}",
              "yes" if r.built else "no", shortened(json.dumps(r.parameters, sort_keys=True))] for c, r in runs],
            {3, 4},
        )  # fmt: skip
    return "\n".join(lines)


def shortened(text: str) -> str:
    return text if len(text) <= PARAMETERS_SHOWN else text[: PARAMETERS_SHOWN - 3] + "..."
