"""The project's dbt vars (dbt_project.yml), checked before dbt starts.

`retrieval-metrics build --vars ...` and `import --build --vars ...` refuse a bad setting in one line that names
the var and its value, exit 2, before anything is loaded or built. Without this, a value the SQL macros check
stops dbt at parse time, but one read only by a Python model (n_permutations, bootstrap_resamples) fails midway,
after tables were replaced. The macros (macros/evaluation_settings.sql, macros/cutoffs.sql) keep their own
checks for plain `dbt build`; the rules here are the same ones, for every var.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from retrieval_metrics.warehouse import IDENTIFIER, InputError, connect

Rule = Callable[[object], str | None]  # the reason a value is refused, or None


def integer(minimum: int, maximum: int | None = None) -> Rule:
    """An integer >= minimum (and <= maximum, for one the models store in a column that holds no more), given as a
    number or as its digits (dbt passes both)."""

    def check(value: object) -> str | None:
        text = str(value).strip()
        is_integer = not isinstance(value, bool | float) and text.removeprefix("-").isdigit()
        if not (is_integer and int(text) >= minimum):
            return f"is not an integer >= {minimum}"
        return f"is more than {maximum}" if maximum is not None and int(text) > maximum else None

    return check


def probability(value: object) -> str | None:
    """A number strictly between 0 and 1 (rbp_persistence), given as a number or as its text."""
    try:
        number = float(str(value).strip()) if not isinstance(value, bool) else None
    except ValueError:
        number = None
    return None if number is not None and 0 < number < 1 else "is not a number between 0 and 1 (exclusive)"


def kappa_threshold(value: object) -> str | None:
    """none (no gate), or a kappa to reach: a number from -1 to 1 (min_judge_kappa)."""
    if str(value).strip().lower() == "none":
        return None
    try:
        number = float(str(value).strip()) if not isinstance(value, bool) else None
    except ValueError:
        number = None
    return None if number is not None and -1 <= number <= 1 else "is not none or a number from -1 to 1"


def most_docs(value: object) -> str | None:
    """none (every document), or the most documents of a ranking measured: 1 .. MAX_INTEGER (max_docs_per_question)."""
    if str(value).strip().lower() == "none":
        return None
    return None if integer(1, MAX_INTEGER)(value) is None else f"is not none or an integer from 1 to {MAX_INTEGER}"


def one_of(*choices: str) -> Rule:
    return lambda value: None if value in choices else f"is not one of {', '.join(choices)}"


def boolean(value: object) -> str | None:
    is_boolean = isinstance(value, bool) or str(value).lower() in {"true", "false"}
    return None if is_boolean else "is not true or false"


def items_of(value: object) -> list[object]:
    """A list setting's items, given as a list, one value, or "a,b" (text items stripped)."""
    items = value.split(",") if isinstance(value, str) else value if isinstance(value, list) else [value]
    return [item.strip() if isinstance(item, str) else item for item in items]


MAX_INTEGER = 2**31 - 1  # the models' integer columns: k, relevance_level, err_max_grade, bootstrap_resamples
MAX_BIGINT = 2**63 - 1  # ... and bigint: bootstrap_seed (int_collection_evaluation_settings)
MAX_CUTOFF = MAX_INTEGER  # k is a 32-bit integer in every model


def cutoffs(value: object) -> str | None:
    """k_values: a list, one integer, or "1,5,10"; each a positive 32-bit integer, at least one."""
    values = items_of(value)
    if not values:
        return "is empty: give at least one cutoff, e.g. [1, 2, 3]"
    bad = [v for v in values if integer(1)(v) is not None]
    if bad:
        return f"holds {str(bad[0]).strip()!r}, not a positive integer"
    too_big = [v for v in values if int(str(v).strip()) > MAX_CUTOFF]
    return f"holds {str(too_big[0]).strip()}, more than {MAX_CUTOFF}" if too_big else None


def identifier(value: object) -> str | None:
    return None if isinstance(value, str) and IDENTIFIER.fullmatch(value) else "is not a run or collection id"


def no_baseline(value: object) -> bool:
    """True for baseline_run_id's none (or an empty value): the collection's runs are compared with no run."""
    return value is None or str(value).strip().lower() in {"", "none"}


def baseline_run(value: object) -> str | None:
    """baseline_run_id: none (no comparisons), or a run id."""
    return None if no_baseline(value) or identifier(value) is None else "is not none or a run id"


def identifiers(value: object) -> str | None:
    """Run ids: a list, one, or "a,b"."""
    bad = [v for v in items_of(value) if identifier(v) is not None]
    return f"holds {bad[0]!r}, not a run id" if bad else None


def version(value: object) -> str | None:
    """latest, or a qrels version number >= 0 (qrels_version)."""
    text = str(value).strip().lower()
    if text == "latest" or (text.isdigit() and int(text) <= MAX_INTEGER):
        return None
    return "is not latest or a version number >= 0"


MEASURE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]*$")  # as measure_catalog names them: ndcg_cut_10, ERR@10, 11pt_avg


def measure_names(value: object) -> str | None:
    """A list of measure names (or one, or "a,b"): question_comparisons' measure_name, e.g. ndcg_cut_10, map."""
    bad = [v for v in items_of(value) if not (isinstance(v, str) and MEASURE_NAME.fullmatch(v))]
    return f"holds {bad[0]!r}, not a measure name (as run_measures names it: ndcg_cut_10, map)" if bad else None


RULES: dict[str, Rule] = {
    "k_values": cutoffs,
    "averaging": one_of("all_questions", "retrieved_only"),
    "relevance_level": integer(0, MAX_INTEGER),
    "judged_docs_only": boolean,
    "ignore_identical_ids": boolean,
    "max_docs_per_question": most_docs,
    "iprec_rule": one_of("trec_eval_9", "trec_eval_10"),
    "err_max_grade": integer(1, MAX_INTEGER),
    "rbp_persistence": probability,
    "qrels_version": version,
    "rbo_persistence": probability,
    "bootstrap_resamples": integer(1, MAX_INTEGER),
    "bootstrap_seed": integer(0, MAX_BIGINT),
    "max_outranking_docs_listed": integer(0),
    "baseline_run_id": baseline_run,
    "n_permutations": integer(1),
    "permutation_seed": integer(0),
    "test_all_runs": boolean,
    "gated_collection_id": identifier,
    "gated_run_ids": identifiers,
    "gated_measures": measure_names,
    "min_judge_kappa": kappa_threshold,
}
NAMED_RUNS = {"baseline_run_id", "gated_collection_id", "gated_run_ids"}


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
    import yaml

    from retrieval_metrics.dbt_runner import project_dir

    return dict(yaml.safe_load((project_dir() / "dbt_project.yml").read_text()).get("vars", {}))


def check_named_runs(database: Path, given: dict[str, object]) -> None:
    """The baseline run and the gated collection and runs that --vars name exist in the warehouse."""
    if not database.exists():
        return
    with connect(database, read_only=True) as con:
        if not con.execute("select count(*) from duckdb_tables() where schema_name = 'raw' and table_name = 'runs'"
                           ).fetchall()[0][0]:  # fmt: skip
            return
        runs = con.execute("select distinct collection_id, run_id from raw.runs").fetchall()
    settings = {**project_defaults(), **given}
    baseline = str(settings.get("baseline_run_id"))
    if "baseline_run_id" in given and not no_baseline(given["baseline_run_id"]) and baseline not in {
        run_id for _, run_id in runs
    }:
        raise InputError(f"var baseline_run_id: {baseline!r} is not a run of any collection")
    gated = str(settings.get("gated_collection_id"))
    if given.keys() & {"gated_collection_id", "gated_run_ids"}:
        in_gated = {run_id for collection_id, run_id in runs if collection_id == gated}
        if not in_gated:
            raise InputError(f"var gated_collection_id: {gated!r} is not a collection with runs")
        run_ids = settings.get("gated_run_ids") or []
        missing = [str(r) for r in (run_ids if isinstance(run_ids, list) else [run_ids]) if str(r) not in in_gated]
        if missing:
            raise InputError(f"var gated_run_ids: {missing[0]!r} is not a run of collection {gated!r}")
