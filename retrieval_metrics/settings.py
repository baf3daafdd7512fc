"""The check of `--vars` before dbt starts (check_vars), by the rules of retrieval_metrics/setting_definitions.py.

`retrieval-metrics build --vars ...` and `import --build --vars ...` refuse a bad setting in one line that names
the var and its value, exit 2, before anything is loaded or built. Without this, a value the SQL macros check
stops dbt at parse time, but one read only by a Python model (n_permutations, bootstrap_resamples) fails midway,
after tables were replaced. For plain `dbt build`, the macro setting() (macros/evaluation_settings.sql) checks
each var it reads by the same table; tests/python/test_setting_definitions.py checks that it refuses what the
rules refuse, with their messages.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from retrieval_metrics.setting_definitions import Rule, is_none, items_of, renamed, var_settings
from retrieval_metrics.warehouse import InputError, connect

# every dbt var's rule, in the table's order
RULES: dict[str, Rule] = {setting.name: setting.rule for setting in var_settings()}
NAMED_RUNS = {setting.name for setting in var_settings() if setting.names_runs}


def no_baseline(value: object) -> bool:
    """True for baseline_run_id's none (or an empty value): the collection's runs are compared with no run."""
    return is_none(value)


def given_vars(dbt_args: Sequence[str]) -> dict[str, object]:
    """The vars given with --vars (the last --vars wins, as in dbt); InputError if one is not a YAML mapping."""
    import yaml

    given: dict[str, object] = {}
    for position, arg in enumerate(dbt_args):
        text = arg.partition("=")[2] if arg.startswith("--vars=") else None
        if arg == "--vars":
            text = dbt_args[position + 1] if position + 1 < len(dbt_args) else ""
        if text is None:
            continue
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise InputError(f"--vars {text!r} is not YAML: {' '.join(str(exc).split())}") from None
        if not isinstance(value, dict):
            raise InputError(f"--vars {text!r} is not a mapping of var names to values, e.g. '{{k_values: [1, 10]}}'")
        given = value
    return given


def check_vars(database: Path | None, dbt_args: Sequence[str]) -> None:
    """InputError, before dbt starts, for --vars that are not a YAML mapping, that name a var the project does
    not have (a typo dbt would ignore), that give a value outside the var's rule, or (given the database) that
    name a baseline or gated run that is not in it (the comparisons would silently change)."""
    given = given_vars(dbt_args)
    for name in given:
        if renamed(str(name)):
            raise InputError(f"--vars: {renamed(str(name))}")
    unknown = sorted(str(name) for name in given if name not in RULES)
    if unknown:
        raise InputError(f"--vars: no var {unknown[0]!r} in this project (its vars: {', '.join(RULES)})")
    for name, value in given.items():
        reason = RULES[name](value)
        if reason is not None:
            raise InputError(f"var {name}: {value!r} {reason} (dbt_project.yml documents each var)")
    if database is not None and given.keys() & NAMED_RUNS:
        check_named_runs(database, given)


def project_defaults() -> dict[str, object]:
    """Every dbt var's default (dbt_project.yml's setting_definitions), in the table's order."""
    return {setting.name: setting.default for setting in var_settings()}


def check_named_runs(database: Path, given: dict[str, object]) -> None:
    """The baseline runs and the gated collection and runs that --vars name exist in the warehouse."""
    if not database.exists():
        return
    with connect(database, read_only=True) as con:
        if not con.execute("select count(*) from duckdb_tables() where schema_name = 'raw' and table_name = 'runs'"
                           ).fetchall()[0][0]:  # fmt: skip
            return
        runs = con.execute("select distinct collection_id, run_id from raw.runs").fetchall()
    settings = {**project_defaults(), **given}
    baselines = [run for run in items_of(given.get("baseline_run_id")) if not no_baseline(run)]
    known = {run_id for _, run_id in runs}
    missing = [str(run) for run in baselines if str(run) not in known]
    if missing:
        raise InputError(f"var baseline_run_id: {missing[0]!r} is not a run of any collection")
    gated = str(settings.get("gated_collection_id"))
    if given.keys() & {"gated_collection_id", "gated_run_ids"}:
        in_gated = {run_id for collection_id, run_id in runs if collection_id == gated}
        if not in_gated:
            raise InputError(f"var gated_collection_id: {gated!r} is not a collection with runs")
        run_ids = settings.get("gated_run_ids") or []
        missing = [str(r) for r in (run_ids if isinstance(run_ids, list) else [run_ids]) if str(r) not in in_gated]
        if missing:
            raise InputError(f"var gated_run_ids: {missing[0]!r} is not a run of collection {gated!r}")
