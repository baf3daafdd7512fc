"""A collection's own evaluation settings, kept in the warehouse (raw.collection_settings), so that one warehouse
holds collections evaluated each its own way: Docent at k = 1, 2, 3 against keyword_overlap, a TREC collection
at k = 10, 100 against its own baseline, in one build.

    retrieval-metrics settings --collection C                               # what the next build uses
    retrieval-metrics settings --collection C --set k_values=10,100 --set baseline_run_id=bm25
    retrieval-metrics settings --collection C --set relevance_level=2 --set averaging=retrieved_only
    retrieval-metrics settings --collection C --unset k_values              # back to the seed's, or the var's
    retrieval-metrics settings --collection C --set baseline_run_id=none    # no baseline: no comparisons

A setting comes from one place, the first that has it: the warehouse (this command, rm.collection_settings), the seed
collection_settings (the shipped collections'), the dbt var (the default for every other collection). The build
reads them in int_collection_settings; a changed setting recomputes that collection's runs only
(docs/measures.md#settings-per-collection). A bad setting is refused in one line naming the collection and the
setting, exit 2, nothing changed. tie_rule (no var: trec_eval by default) is read by the writers of runs; changing
it re-ranks the collection's runs from their stored scores in the same transaction (tie_rules.rerank_runs).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

import duckdb

from retrieval_metrics import measure_instances, tie_rules
from retrieval_metrics.raw_tables import check_judged
from retrieval_metrics.presets import PRESETS
from retrieval_metrics.settings import RULES as VAR_RULES
from retrieval_metrics.settings import items_of, no_baseline, one_of, project_defaults
from retrieval_metrics.warehouse import InputError, check_identifier, connect, transaction

# the settings a collection may have of its own, each checked by the rule of the dbt var that is its default; the
# preset it follows (retrieval_metrics/presets.py), which gives the settings it names; and its tie rule
# (retrieval_metrics/tie_rules.py), which the writers of runs read: these two have no var
RULES = {
    "preset": one_of(*PRESETS),
    **{name: VAR_RULES[name] for name in
       ["k_values", "baseline_run_id", "relevance_level", "averaging", "judged_docs_only", "err_max_grade",
        "rbp_persistence", "qrels_version", "ignore_identical_ids", "max_docs_per_question", "iprec_rule", "bootstrap_resamples", "bootstrap_seed", "gated_run_ids",
        "gated_measures", "min_judge_kappa"]},
    tie_rules.SETTING: one_of(*tie_rules.TIE_RULES),  # read by the writers of runs, not the build: no var
    "measures": measure_instances.check,  # the measure instances it reports beside the defaults: no var (none)
}  # fmt: skip
LISTS = {"k_values", "gated_run_ids", "gated_measures", "measures"}  # stored one row per item
GATE = {"gated_run_ids", "gated_measures"}  # the regression gate's: the vars give them to gated_collection_id only


def values_of(setting: str, value: object) -> list[str]:
    """A setting's value as the rows that store it: a list's items, distinct and in order (k_values' as numbers);
    one row otherwise (an integer as its digits, a yes-or-no setting as true or false)."""
    if setting == "measures":
        return measure_instances.values(value)
    if setting in LISTS:
        items = items_of(value)
        if setting == "k_values":
            return [str(k) for k in sorted({int(str(item)) for item in items})]
        return sorted({str(item) for item in items})
    if setting in {"relevance_level", "err_max_grade", "bootstrap_resamples", "bootstrap_seed"}:
        return [str(int(str(value).strip()))]
    if setting == "rbp_persistence":
        return [repr(float(str(value).strip()))]  # 0.90 and .9 are 0.9
    if setting in {"judged_docs_only", "ignore_identical_ids"}:
        return [str(value).strip().lower()]
    if setting == "baseline_run_id" and no_baseline(value):
        return ["none"]
    if setting == "min_judge_kappa":
        text = str(value).strip().lower()
        return [text if text == "none" else repr(float(text))]
    if setting == "max_docs_per_question":
        text = str(value).strip().lower()
        return [text if text == "none" else str(int(text))]
    if setting == "qrels_version":
        text = str(value).strip().lower()
        return [text if text == "latest" else str(int(text))]
    return [str(value)]


def seed_settings(collection_id: str) -> dict[str, list[str]]:
    """The collection's settings in the seed collection_settings (the shipped collections')."""
    from retrieval_metrics.collections import seed_file

    found: dict[str, list[str]] = {}
    with seed_file("collection_settings").open(newline="") as handle:
        for row in csv.DictReader(handle):
            if row["collection_id"] == collection_id:
                found.setdefault(row["setting"], []).append(row["value"])
    return found


def stored_settings(con: duckdb.DuckDBPyConnection, collection_id: str) -> dict[str, list[str]]:
    """The collection's settings in raw.collection_settings (none in a warehouse written before that table)."""
    found: dict[str, list[str]] = {}
    exists = con.execute("select count(*) from duckdb_tables() "
                         "where schema_name = 'raw' and table_name = 'collection_settings'").fetchone()  # fmt: skip
    if not (exists and exists[0]):
        return found
    rows = con.execute(
        "select setting, value from raw.collection_settings where collection_id = ? order by setting, value",
        [collection_id],
    ).fetchall()
    for setting, value in rows:
        found.setdefault(setting, []).append(value)
    return found


def described(con: duckdb.DuckDBPyConnection, collection_id: str) -> str:
    """The collection's settings as the next build uses them, each with where it comes from."""
    stored, seeded, defaults = stored_settings(con, collection_id), seed_settings(collection_id), project_defaults()
    parts = []
    for setting in RULES:
        if setting in stored:
            values, source = stored[setting], "set here"
        elif setting in seeded:
            values, source = seeded[setting], "the seed's"
        elif setting in GATE and defaults.get("gated_collection_id") != collection_id:
            values, source = ["none"], "not gated"  # the gate's vars are gated_collection_id's only
        elif setting in defaults:
            values, source = values_of(setting, defaults[setting]), "the var's"
        elif setting == tie_rules.SETTING:
            values, source = [tie_rules.DEFAULT_TIE_RULE], "the default"
        else:
            continue  # no preset
        shown = ", ".join(sorted(values, key=int) if setting == "k_values" else values) if setting in LISTS else values[0]
        parts.append(f"{setting} {shown} ({source})")
    return f"collection {collection_id}: " + "; ".join(parts)


def check_value(con: duckdb.DuckDBPyConnection, collection_id: str, setting: str, value: object) -> list[str]:
    """The rows a setting's value is stored as; InputError naming the collection and the setting if it is bad."""
    if setting not in RULES:
        raise InputError(f"collection {collection_id!r}: no setting {setting!r} (a collection's own settings: "
                         f"{', '.join(RULES)})")  # fmt: skip
    reason = RULES[setting](value)
    if reason is not None:
        raise InputError(f"collection {collection_id!r}: setting {setting}: {value!r} {reason}")
    values = values_of(setting, value)
    if setting == "gated_run_ids" or (setting == "baseline_run_id" and values != ["none"]):
        runs = [run for (run,) in con.execute(
            "select run_id from raw.runs where collection_id = ? order by run_id", [collection_id]).fetchall()]  # fmt: skip
        for run_id in values:
            if run_id not in runs:
                having = f"its runs: {', '.join(runs)}" if runs else "it has no runs yet"
                raise InputError(f"collection {collection_id!r}: setting {setting}: {run_id!r} is not a run of "
                                 f"the collection ({having})")  # fmt: skip
    if setting == tie_rules.SETTING:
        tie_rules.check_rule(con, collection_id, values[0])
    if setting == "qrels_version" and values != ["latest"]:
        (latest,) = con.execute("select coalesce(max(qrels_version), 0) from raw.judgments where collection_id = ?",
                                [collection_id]).fetchone() or (0,)  # fmt: skip
        if int(values[0]) > latest:
            raise InputError(f"collection {collection_id!r}: setting qrels_version: {values[0]} is not a version of "
                             f"its judgments (0 to {latest}; import --judgments adds the next)")  # fmt: skip
    return values


def set_settings(
    database: Path, collection_id: str, values: Mapping[str, object] | None = None, unset: Sequence[str] = ()
) -> str:
    """Give the collection these settings (`values`) and drop its own value of the `unset` ones, in one
    transaction; the line describing its settings afterwards. Nothing given: only the line. A preset gives the
    settings it names, but for those `values` gives too."""
    check_identifier("collection", collection_id)
    if not database.exists():
        raise InputError(f"{database} does not exist: write a run or import a collection first")
    values = dict(values or {})
    for setting in unset:
        if setting not in RULES:
            raise InputError(f"collection {collection_id!r}: no setting {setting!r} to unset (a collection's own "
                             f"settings: {', '.join(RULES)})")  # fmt: skip
    both = sorted(set(values) & set(unset))
    if both:
        raise InputError(f"collection {collection_id!r}: setting {both[0]} both set and unset")
    if not values and not unset:  # only shown: read-only
        with connect(database, read_only=True) as con:
            check_judged(con, collection_id)
            return described(con, collection_id)
    if "preset" in values:
        reason = RULES["preset"](values["preset"])
        if reason is not None:
            raise InputError(f"collection {collection_id!r}: setting preset: {values['preset']!r} {reason}")
        values = {**PRESETS[str(values["preset"])].settings, **values}
    with connect(database) as con, transaction(con):
        check_judged(con, collection_id)
        tie_rule = tie_rules.collection_tie_rule(con, collection_id)
        rows = {setting: check_value(con, collection_id, setting, value) for setting, value in values.items()}
        for setting in [*rows, *unset]:
            con.execute("delete from raw.collection_settings where collection_id = ? and setting = ?",
                        [collection_id, setting])  # fmt: skip
        for setting, setting_values in rows.items():
            con.executemany("insert into raw.collection_settings values (?, ?, ?)",
                            [[collection_id, setting, value] for value in setting_values])  # fmt: skip
        line = described(con, collection_id)
        if tie_rules.collection_tie_rule(con, collection_id) != tie_rule:  # the runs' ranks follow the rule
            n_runs = tie_rules.rerank_runs(con, collection_id)
            if n_runs:
                line += (f"\nre-ranked {n_runs} run(s) of {collection_id} from their stored scores by tie_rule "
                         f"{tie_rules.collection_tie_rule(con, collection_id)}")  # fmt: skip
        return line
