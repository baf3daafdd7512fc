"""Setting a collection's own settings (which settings, their rules and storage: setting_definitions.py), kept in
the warehouse (raw.collection_settings), so that one warehouse
holds collections evaluated each its own way: Docent at k = 1, 2, 3 against keyword_overlap, a TREC collection
at k = 10, 100 against its own baseline, in one build.

    retrieval-metrics settings --collection C                               # what the next build uses
    retrieval-metrics settings --collection C --set k_values=10,100 --set baseline_run_id=bm25
    retrieval-metrics settings --collection C --set relevance_level=2 --set averaging=retrieved_only
    retrieval-metrics settings --collection C --unset k_values              # back to the seed's, or the var's
    retrieval-metrics settings --collection C --set baseline_run_id=bm25,splade   # every run against each
    retrieval-metrics settings --collection C --set baseline_run_id=none    # no baseline: no comparisons

A setting comes from one place, the first that has it: the warehouse (this command, rm.collection_settings), the seed
collection_settings (the shipped collections'), the dbt var (the default for every other collection). The build
reads them in int_collection_settings; a changed setting recomputes that collection's runs only
(docs/measures.md#settings-per-collection). A bad setting is refused in one line naming the collection and the
setting, exit 2, nothing changed. tie_rule (no var: trec_eval by default) and trec_eval_version are read by the
writers of runs too; changing either re-ranks the collection's runs from their stored scores in the same
transaction (tie_rules.rerank_runs). A collection that follows a preset whose settings were set otherwise since
keeps the preset's name with the settings overridden: `trec-dl (overridden: relevance_level)` (record_overrides).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

import duckdb

from retrieval_metrics import tie_rules
from retrieval_metrics.presets import PRESETS, preset_name
from retrieval_metrics.raw_tables import check_judged
from retrieval_metrics.setting_definitions import BY_NAME, OLD_VALUES, RENAMED, collection_settings, renamed
from retrieval_metrics.settings import project_defaults
from retrieval_metrics.warehouse import InputError, check_identifier, connect, transaction

# the settings a collection may have of its own (setting_definitions.SETTINGS, in its order): those with a dbt
# var, which is their default, and those without one (preset, tie_rule)
RULES = {setting.name: setting.rule for setting in collection_settings()}
LISTS = {setting.name for setting in collection_settings() if setting.list_valued}  # stored one row per item
GATE = {setting.name for setting in collection_settings() if setting.gate}  # gated_collection_id's only by var


def values_of(setting: str, value: object) -> list[str]:
    """A setting's value as the rows that store it (the setting's Rule.store): a list's items, distinct and in
    order (k_values' as numbers); one row otherwise (an integer as its digits, a yes-or-no as true or false)."""
    return BY_NAME[setting].rule.store(value)


def with_new_names(found: dict[str, list[str]]) -> dict[str, list[str]]:
    """Settings stored under an old name (iprec_rule) as their new one (trec_eval_version), values translated."""
    for old, new in RENAMED.items():
        if old in found:
            values = [OLD_VALUES.get(old, {}).get(value, value) for value in found.pop(old)]
            found.setdefault(new, values)
    return found


def seed_settings(collection_id: str) -> dict[str, list[str]]:
    """The collection's settings in the seed collection_settings (the shipped collections')."""
    from retrieval_metrics.collections import seed_file

    found: dict[str, list[str]] = {}
    with seed_file("collection_settings").open(newline="") as handle:
        for row in csv.DictReader(handle):
            if row["collection_id"] == collection_id:
                found.setdefault(row["setting"], []).append(row["value"])
    return with_new_names(found)


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
    return with_new_names(found)


def effective(con: duckdb.DuckDBPyConnection, collection_id: str) -> dict[str, tuple[list[str], str]]:
    """The collection's settings as the next build uses them: each one's stored values and where they come from
    (no preset: no entry)."""
    stored, seeded, defaults = stored_settings(con, collection_id), seed_settings(collection_id), project_defaults()
    found: dict[str, tuple[list[str], str]] = {}
    for setting in RULES:
        if setting in stored:
            found[setting] = stored[setting], "set here"
        elif setting in seeded:
            found[setting] = seeded[setting], "the seed's"
        elif setting in GATE and defaults.get("gated_collection_id") != collection_id:
            found[setting] = ["none"], "not gated"  # the gate's vars are gated_collection_id's only
        elif setting in defaults:
            found[setting] = values_of(setting, defaults[setting]), "the var's"
        elif setting != "preset":
            found[setting] = values_of(setting, BY_NAME[setting].default), "the default"
    return found


def described(con: duckdb.DuckDBPyConnection, collection_id: str) -> str:
    """The collection's settings as the next build uses them, each with where it comes from."""
    parts = []
    for setting, (values, source) in effective(con, collection_id).items():
        values = [BY_NAME[setting].rule.show(value) for value in values]
        shown = ", ".join(sorted(values, key=int) if setting == "k_values" else values) if setting in LISTS else values[0]
        parts.append(f"{setting} {shown} ({source})")
    return f"collection {collection_id}: " + "; ".join(parts)


def overridden(con: duckdb.DuckDBPyConnection, collection_id: str, preset: str) -> list[str]:
    """The settings the preset gives that the collection no longer has at the preset's value, in order."""
    now = effective(con, collection_id)
    given = PRESETS[preset].settings
    return [setting for setting in RULES if setting in given
            and sorted(now[setting][0]) != sorted(values_of(setting, given[setting]))]  # fmt: skip


def record_overrides(con: duckdb.DuckDBPyConnection, collection_id: str) -> None:
    """The collection's preset as stored (raw.collection_settings): its name, and `(overridden: a, b)` after it
    when settings it gives were set otherwise since (or unset to a default that differs)."""
    preset_row = stored_settings(con, collection_id).get("preset") or seed_settings(collection_id).get("preset")
    if not preset_row or preset_name(preset_row[0]) not in PRESETS:
        return
    name = preset_name(preset_row[0])
    changed = overridden(con, collection_id, name)
    value = f"{name} (overridden: {', '.join(changed)})" if changed else name
    if value != preset_row[0]:
        con.execute("delete from raw.collection_settings where collection_id = ? and setting = 'preset'",
                    [collection_id])  # fmt: skip
        con.execute("insert into raw.collection_settings values (?, 'preset', ?)", [collection_id, value])


def check_value(con: duckdb.DuckDBPyConnection, collection_id: str, setting: str, value: object) -> list[str]:
    """The rows a setting's value is stored as; InputError naming the collection and the setting if it is bad."""
    if renamed(setting):
        raise InputError(f"collection {collection_id!r}: {renamed(setting)}")
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
        if renamed(setting):
            raise InputError(f"collection {collection_id!r}: {renamed(setting)}")
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
        values = {**PRESETS[str(values["preset"]).strip()].settings, **values}
    with connect(database) as con, transaction(con):
        check_judged(con, collection_id)
        tie_rule = tie_rules.collection_tie_rule(con, collection_id)
        rows = {setting: check_value(con, collection_id, setting, value) for setting, value in values.items()}
        for setting in [*rows, *unset]:
            old_names = [old for old, new in RENAMED.items() if new == setting]  # a row stored under an old name
            con.execute("delete from raw.collection_settings where collection_id = ? and list_contains(?, setting)",
                        [collection_id, [setting, *old_names]])  # fmt: skip
        for setting, setting_values in rows.items():
            con.executemany("insert into raw.collection_settings values (?, ?, ?)",
                            [[collection_id, setting, value] for value in setting_values])  # fmt: skip
        record_overrides(con, collection_id)
        line = described(con, collection_id)
        if tie_rules.collection_tie_rule(con, collection_id) != tie_rule:  # the runs' ranks follow the rule
            n_runs = tie_rules.rerank_runs(con, collection_id)
            if n_runs:
                now = effective(con, collection_id)
                line += (f"\nre-ranked {n_runs} run(s) of {collection_id} from their stored scores by tie_rule "
                         f"{now[tie_rules.SETTING][0][0]} "
                         f"(trec_eval_version {now[tie_rules.VERSION_SETTING][0][0]})")  # fmt: skip
        return line
