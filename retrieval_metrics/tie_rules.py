"""A collection's tie rule: the one order every writer of a run ranks a question's documents by (the built-in
retrievers, plug-ins, rm.write_run, fusion, the TREC and BEIR run imports), so that the same scores give the same
ranks, and the same numbers, whoever wrote them.

- trec_eval: score descending, ties by doc id descending (compared as strings): how trec_eval and pytrec_eval
  rank a run, whatever its rank column says. Every collection's default. The score is compared as the
  collection's `trec_eval_version` holds it: 9 (and pytrec_eval) as a 32-bit float, a double beyond a float's
  range as infinity (float32); 10 as the double read (TREC_EVAL_10, the order the writers then use).
- doc_order: score descending (as stored, a double), ties in the collection's document order (doc_position:
  Docent's seed file order, an imported collection's doc id ascending): the lesson's stable sort, which its
  numbers need. Only for a collection with documents; a doc it does not have comes after those it has, by doc id
  descending.

The setting is the collection's `tie_rule` (retrieval-metrics settings, a preset, the seed collection_settings:
Docent's is doc_order), with its `trec_eval_version`, read here by the writers (collection_tie_rule gives the
order both make). Changing either re-ranks the collection's runs from their stored scores, in the same
transaction (rerank_runs). Here each rule is named once: as the SQL order
of a window (order_by) and as the numpy order of one question's scores (Ties).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import numpy as np

from retrieval_metrics.collections import doc_positions_sql
from retrieval_metrics.warehouse import InputError, sql_literal

TREC_EVAL, DOC_ORDER = "trec_eval", "doc_order"
TIE_RULES = (TREC_EVAL, DOC_ORDER)  # the setting's values
TREC_EVAL_10 = "trec_eval_10"  # trec_eval's rule under trec_eval_version 10: scores as doubles (not a setting)
DEFAULT_TIE_RULE = TREC_EVAL  # a collection whose settings, seed and preset name none
SETTING = "tie_rule"
VERSION_SETTING = "trec_eval_version"


def float32(column: str) -> str:
    """A double column as trec_eval 9 and pytrec_eval hold it: a 32-bit float, infinity beyond a float's range
    (rounded to nearest, as C converts it)."""
    return (f"(case when try_cast({column} as float) is null then if({column} > 0, 'inf'::float, '-inf'::float) "
            f"else cast({column} as float) end)")  # fmt: skip


def order_by(rule: str, doc_column: str = "doc_id") -> str:
    """The rule as the ORDER BY of a window over rows with score, `doc_column` and (doc_order) doc_position."""
    if rule == TREC_EVAL:
        return f"{float32('score')} desc, {doc_column} desc"
    if rule == TREC_EVAL_10:
        return f"score desc, {doc_column} desc"
    if rule == DOC_ORDER:
        return f"score desc, doc_position asc nulls last, {doc_column} desc"
    raise InputError(f"unknown tie rule {rule!r} (choose from {', '.join(TIE_RULES)})")


def collection_setting(con: duckdb.DuckDBPyConnection, collection_id: str, setting: str) -> str | None:
    """The collection's own value of a one-valued setting as this transaction sees it, else the seed's; None."""
    from retrieval_metrics.per_collection import seed_settings, stored_settings

    for found in (stored_settings(con, collection_id), seed_settings(collection_id)):
        if setting in found:
            return found[setting][0]
    return None


def collection_tie_rule(con: duckdb.DuckDBPyConnection, collection_id: str) -> str:
    """The order the collection's runs are ranked in, as this transaction sees its settings: its tie_rule (its
    own, else the seed's, else trec_eval), trec_eval's as its trec_eval_version (its own, else the seed's, else
    dbt_project.yml's var) holds scores: TREC_EVAL_10 under 10."""
    from retrieval_metrics.settings import project_defaults

    rule = collection_setting(con, collection_id, SETTING) or DEFAULT_TIE_RULE
    version = collection_setting(con, collection_id, VERSION_SETTING)
    if version is None:
        version = str(project_defaults().get(VERSION_SETTING, 9))
    return TREC_EVAL_10 if rule == TREC_EVAL and version == "10" else rule


def has_documents(con: duckdb.DuckDBPyConnection, collection_id: str) -> bool:
    return con.execute(f"select count(*) > 0 from ({doc_positions_sql(collection_id)})").fetchone() == (True,)


def check_rule(con: duckdb.DuckDBPyConnection, collection_id: str, rule: str) -> None:
    """InputError if the collection cannot rank by the rule: doc_order needs its documents."""
    order_by(rule)
    if rule == DOC_ORDER and not has_documents(con, collection_id):
        raise InputError(f"collection {collection_id!r}: setting tie_rule: doc_order needs the collection's "
                         "documents, and it has none (trec_eval ranks ties by doc id)")  # fmt: skip


def with_positions(rule: str, collection_id: str, rows: str, alias: str = "run_rows") -> str:
    """`rows` with a doc_position column where the rule needs it (doc_order), from the collection's documents."""
    if rule != DOC_ORDER:
        return f"select * from ({rows}) as {alias}"
    return (f"select {alias}.*, positions.doc_position from ({rows}) as {alias} "
            f"left join ({doc_positions_sql(collection_id)}) as positions "
            f"on positions.doc_id = {alias}.doc_id")  # fmt: skip


def ranked_rows(con: duckdb.DuckDBPyConnection, collection_id: str, run_rows: str) -> str:
    """A run's rows (question_id, doc_id, score) ranked by the collection's tie rule, as raw_tables.replace_run
    takes them: rank 1 first within each question."""
    rule = collection_tie_rule(con, collection_id)
    return (
        f"select question_id, doc_id, cast(row_number() over (partition by question_id order by {order_by(rule)}) "
        "as integer) as rank, score, cast(null as varchar) as matched_terms "
        f"from ({with_positions(rule, collection_id, run_rows)}) as ranked_in"
    )


@dataclass(frozen=True)
class Ties:
    """A tie rule over one collection's documents (in doc_position order), for ranking scores in numpy."""

    rule: str
    keys: np.ndarray  # each document's place among equal scores, smaller first

    @classmethod
    def of(cls, rule: str, doc_ids: Sequence[str]) -> Ties:
        order_by(rule)
        if rule == DOC_ORDER:
            return cls(rule, np.arange(len(doc_ids)))  # trec_eval's below: TREC_EVAL or TREC_EVAL_10
        by_id_descending = sorted(range(len(doc_ids)), key=lambda i: doc_ids[i], reverse=True)
        keys = np.empty(len(doc_ids), dtype=np.int64)
        keys[by_id_descending] = np.arange(len(doc_ids))
        return cls(rule, keys)

    def best(self, scores: np.ndarray, top_k: int | None = None) -> np.ndarray:
        """The indexes of the top_k docs (None: all) for one question's scores (one per doc), best first (trec_eval
        9's: as 32-bit floats, infinity beyond their range)."""
        with np.errstate(over="ignore"):
            values = np.asarray(scores, dtype=np.float32 if self.rule == TREC_EVAL else np.float64)
        return np.lexsort((self.keys, -values))[:top_k]


def rerank_runs(con: duckdb.DuckDBPyConnection, collection_id: str) -> int:
    """Rank every run of the collection again from its stored scores by its tie rule now (raw.rankings and
    raw.chunk_rankings), in the caller's transaction; the number of runs. A run cut at top_k keeps the docs it
    has. The ranks alone change (the build recomputes the collection's runs: its settings changed)."""
    rule = collection_tie_rule(con, collection_id)
    check_rule(con, collection_id, rule)
    (n_runs,) = con.execute("select count(*) from raw.runs where collection_id = ?", [collection_id]).fetchone() or (0,)
    if not n_runs:
        return 0
    for table, doc_column in (("rankings", "doc_id"), ("chunk_rankings", "chunk_id")):
        rows = f"select * exclude (rank) from raw.{table} where collection_id = {sql_literal(collection_id)}"
        kept = "* exclude (doc_position)" if rule == DOC_ORDER else "*"
        con.execute(
            f"create or replace temp table reranked as select {kept}, "
            f"cast(row_number() over (partition by run_id, question_id order by {order_by(rule, doc_column)}) "
            f"as integer) as rank from ({with_positions(rule, collection_id, rows, 'stored')}) as reranked_in"
        )
        columns = [name for (name,) in con.execute(
            "select column_name from duckdb_columns() where database_name = current_database() and schema_name = 'raw' "
            "and table_name = ? "
            "order by column_index", [table]).fetchall()]  # fmt: skip
        con.execute(f"delete from raw.{table} where collection_id = ?", [collection_id])
        con.execute(f"insert into raw.{table} ({', '.join(columns)}) select {', '.join(columns)} from reranked")
    con.execute("drop table reranked")
    return int(n_runs)

