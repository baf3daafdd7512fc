"""The project's settings, each defined once: dbt_project.yml's var `setting_definitions` gives each setting's
name, default, rule (a kind of KINDS, with its parameters), meaning, what a change of it changes, where it can be
set and its flags. This module reads that table into SETTINGS (Setting objects, each with its Rule) and checks it:
an unknown key or kind, a missing one, or a default its rule refuses fails, naming the setting and the key. The
same table is read by dbt: the macro setting(name) (macros/evaluation_settings.sql) checks a var by its rule's
kind with this module's messages, and int_collection_settings and int_collection_evaluation_settings loop over it.

Made from SETTINGS here:
- retrieval_metrics/settings.py: the check of `--vars` before dbt starts (its RULES: the settings with a dbt var);
- retrieval_metrics/per_collection.py: a collection's own settings (`retrieval-metrics settings`), their rules
  and how each value is stored (Rule.store);
- the CLI's help of `settings` (help_lines), and docs/measures.md's settings table (markdown_table; the test
  fails when the docs differ, `python -m retrieval_metrics.setting_definitions` prints the table).
tests/python/test_setting_definitions.py renders the macro setting() against each kind's Rule.

A new setting is one entry in dbt_project.yml's setting_definitions, its row in docs/measures.md's table, and its
test.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from retrieval_metrics import measure_instances, user_measures
from retrieval_metrics.presets import PRESETS
from retrieval_metrics.tie_rules import TIE_RULES
from retrieval_metrics.warehouse import IDENTIFIER, InputError

MAX_INTEGER = 2**31 - 1  # the models' integer columns: k, a qrels version
MAX_CUTOFF = MAX_INTEGER  # k is a 32-bit integer in every model
NONE = "none"


def items_of(value: object) -> list[object]:
    """A list setting's items, given as a list, one value, or "a,b" (text items stripped)."""
    items = value.split(",") if isinstance(value, str) else value if isinstance(value, list) else [value]
    return [item.strip() if isinstance(item, str) else item for item in items]


def text_of(value: object) -> str:
    return str(value).strip()


def is_none(value: object) -> bool:
    """True for none (or an empty value), where a setting takes none."""
    return value is None or text_of(value).lower() in {"", NONE}


def number_of(value: object) -> float | None:
    """The value as a number (given as one or as its text); None if it is not one."""
    if isinstance(value, bool):
        return None
    try:
        return float(text_of(value))
    except ValueError:
        return None


@dataclass(frozen=True)
class Rule:
    """The values a setting takes: `check` gives the reason a value is refused (None: taken), `store` the rows a
    taken value is stored as (raw.collection_settings, one per list item), `values` says them in words."""

    check: Callable[[object], str | None]
    values: str
    store: Callable[[object], list[str]] = lambda value: [text_of(value)]
    show: Callable[[str], str] = lambda stored: stored  # a stored row as `settings` shows it
    choices: tuple[str, ...] = ()  # one_of's
    minimum: int | None = None  # integer's
    maximum: int | None = None

    def __call__(self, value: object) -> str | None:
        return self.check(value)


def integer(minimum: int, maximum: int | None = None, *, none: bool = False) -> Rule:
    """An integer >= minimum (and <= maximum, for one the models store in a column that holds no more), given as a
    number or as its digits (dbt passes both); with `none`, also none."""

    def check(value: object) -> str | None:
        text = text_of(value)
        if none and text.lower() == NONE:
            return None
        is_integer = not isinstance(value, bool | float) and text.removeprefix("-").isdigit()
        too_big = is_integer and maximum is not None and int(text) > maximum
        if none and not (is_integer and int(text) >= minimum and not too_big):
            return f"is not none or {words}"
        if not (is_integer and int(text) >= minimum):
            return f"is not an integer >= {minimum}"
        return f"is more than {maximum}" if too_big else None

    def store(value: object) -> list[str]:
        return [NONE if none and text_of(value).lower() == NONE else str(int(text_of(value)))]

    words = f"an integer >= {minimum}" if maximum is None else f"an integer from {minimum} to {maximum}"
    return Rule(check, f"`none` or {words}" if none else words, store, minimum=minimum, maximum=maximum)


def one_of(*choices: str) -> Rule:
    """One of the choices, compared as text (a YAML 10 is "10")."""

    def check(value: object) -> str | None:
        taken = not isinstance(value, bool | list | dict) and text_of(value) in choices
        return None if taken else f"is not one of {', '.join(choices)}"

    return Rule(check, " or ".join(f"`{choice}`" for choice in choices), choices=choices)


def _boolean(value: object) -> str | None:
    return None if isinstance(value, bool) or str(value).lower() in {"true", "false"} else "is not true or false"


BOOLEAN = Rule(_boolean, "`true` or `false`", lambda value: [text_of(value).lower()])


def number(minimum: float | None = None, maximum: float | None = None, *, exclusive: bool = False,
           none: bool = False) -> Rule:
    """A number (given as one or as its text, finite: under 1e300 either way) >= minimum and <= maximum (with
    `exclusive`, strictly between them); with `none`, also none."""
    bounds = [f"{'>' if exclusive else '>='} {minimum}"] if minimum is not None else []
    bounds += [f"{'<' if exclusive else '<='} {maximum}"] if maximum is not None else []
    if minimum is not None and maximum is not None:
        words = f"a number between {minimum} and {maximum} (exclusive)" if exclusive else (
            f"a number from {minimum} to {maximum}")  # fmt: skip
    else:
        words = " ".join(["a number", *bounds])

    def check(value: object) -> str | None:
        if none and text_of(value).lower() == NONE:
            return None
        n = number_of(value)
        if n is None or not -1e300 < n < 1e300:
            return f"is not {'none or ' if none else ''}{words}"
        above = minimum is None or (n > minimum if exclusive else n >= minimum)
        below = maximum is None or (n < maximum if exclusive else n <= maximum)
        return None if above and below else f"is not {'none or ' if none else ''}{words}"

    def store(value: object) -> list[str]:
        return [NONE if none and text_of(value).lower() == NONE else repr(float(text_of(value)))]

    return Rule(check, f"`none` or {words}" if none else words, store)


def _cutoffs(value: object) -> str | None:
    values = items_of(value)
    if not values:
        return "is empty: give at least one cutoff, e.g. [1, 2, 3]"
    bad = [v for v in values if integer(1)(v) is not None]
    if bad:
        return f"holds {text_of(bad[0])!r}, not a positive integer"
    too_big = [v for v in values if int(text_of(v)) > MAX_CUTOFF]
    return f"holds {text_of(too_big[0])}, more than {MAX_CUTOFF}" if too_big else None


CUTOFFS = Rule(_cutoffs, "a list of positive integers: `[10, 100]` or `10,100`",
               lambda value: [str(k) for k in sorted({int(text_of(item)) for item in items_of(value)})])  # fmt: skip


def _identifier(value: object) -> str | None:
    return None if isinstance(value, str) and IDENTIFIER.fullmatch(value) else "is not a run or collection id"


IDENTIFIER_RULE = Rule(_identifier, "a collection id")


def _baselines(value: object) -> str | None:
    items = items_of(value)
    if len(items) == 1 and is_none(items[0]):
        return None
    if not items or any(_identifier(item) is not None or text_of(item).lower() == NONE for item in items):
        return "is not none or a list of run ids"
    twice = [item for position, item in enumerate(items) if item in items[:position]]
    return f"names {twice[0]} twice" if twice else None


def _baselines_stored(value: object) -> list[str]:
    items = items_of(value)
    return [NONE] if len(items) == 1 and is_none(items[0]) else sorted(text_of(item) for item in items)


BASELINES = Rule(_baselines, "`none` or a list of run ids: `bm25` or `bm25,splade`", _baselines_stored)


def _identifiers(value: object) -> str | None:
    bad = [v for v in items_of(value) if _identifier(v) is not None]
    return f"holds {bad[0]!r}, not a run id" if bad else None


def sorted_items(value: object) -> list[str]:
    return sorted({str(item) for item in items_of(value)})


IDENTIFIERS = Rule(_identifiers, "a list of run ids", sorted_items)


def _version(value: object) -> str | None:
    text = text_of(value).lower()
    return None if text == "latest" or (text.isdigit() and int(text) <= MAX_INTEGER) else (
        "is not latest or a version number >= 0")  # fmt: skip


VERSION = Rule(_version, "`latest` or a version number >= 0",
               lambda value: ["latest" if text_of(value).lower() == "latest" else str(int(text_of(value)))])

def _differences(value: object) -> str | None:
    values = items_of(value)
    good = values and all((number := number_of(v)) is not None and 0 < number < 1e300 for v in values)
    return None if good else "is not a list of positive numbers"


DIFFERENCES = Rule(_differences, "a list of positive numbers: `[0.02, 0.05]` or `0.02,0.05`",
                   lambda value: [repr(n) for n in sorted({float(text_of(item)) for item in items_of(value)})])  # fmt: skip

MEASURE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]*$")  # as measure_catalog names them: ndcg_cut_10


def _measure_names(value: object) -> str | None:
    bad = [v for v in items_of(value) if not (isinstance(v, str) and MEASURE_NAME.fullmatch(v))]
    return f"holds {bad[0]!r}, not a measure name (as run_measures names it: ndcg_cut_10, map)" if bad else None


MEASURE_NAMES = Rule(_measure_names, "a list of measure names (`ndcg_cut_10`, `map`)", sorted_items)

MEASURE_INSTANCES = Rule(measure_instances.check, "`none` or a list of measures with parameters as ir_measures "
                         "writes them: `RBP(p=0.5), AP(rel=2), nDCG(gains={0:0,1:1,2:3})@10`",
                         measure_instances.values)  # fmt: skip
USER_MEASURES = Rule(user_measures.check, "`none` or a list of Python files outside the package, each listing "
                     "its measures in MEASURES (define_sql, define_byquery)", user_measures.values,
                     show=user_measures.shown)  # fmt: skip

# Where a setting can be set (an entry's scope)
VAR = "build"  # a dbt var only, the same for every collection of a build
COLLECTION = "collection"  # a collection's own (`retrieval-metrics settings`), else the dbt var's
OWN = "own"  # a collection's own only; without one, `default`

# The rule of each kind an entry's `rule` names, made from the entry's parameters (KIND_PARAMETERS). The macro
# setting() checks a var of every kind but PYTHON_KINDS (macros/evaluation_settings.sql), whose values come from
# Python and which have no var (scope own).
KINDS: dict[str, Callable[[dict[str, Any]], Rule]] = {
    "one_of": lambda entry: one_of(*(str(choice) for choice in entry["choices"])),
    "integer": lambda entry: integer(entry["minimum"], entry.get("maximum"), none=entry.get("none", False)),
    "number": lambda entry: number(entry.get("minimum"), entry.get("maximum"),
                                   exclusive=entry.get("exclusive", False), none=entry.get("none", False)),
    "boolean": lambda _: BOOLEAN,
    "cutoffs": lambda _: CUTOFFS,
    "differences": lambda _: DIFFERENCES,
    "version": lambda _: VERSION,
    "identifier": lambda _: IDENTIFIER_RULE,
    "baselines": lambda _: BASELINES,
    "identifiers": lambda _: IDENTIFIERS,
    "measure_names": lambda _: MEASURE_NAMES,
    "preset": lambda _: one_of(*PRESETS),
    "tie_rule": lambda _: one_of(*TIE_RULES),
    "measure_instances": lambda _: MEASURE_INSTANCES,
    "user_measures": lambda _: USER_MEASURES,
}
PYTHON_KINDS = {"preset", "tie_rule", "measure_instances", "user_measures"}  # their values are Python's: no var
KIND_PARAMETERS = {  # each kind's parameters: needed, optional
    "one_of": ({"choices"}, set()),
    "integer": ({"minimum"}, {"maximum", "none"}),
    "number": (set(), {"minimum", "maximum", "exclusive", "none"}),
}
FLAGS = ("recorded", "list_valued", "gate", "names_runs", "across_runs")
SETTING_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
KEYS = {"default", "rule", "meaning", "changes", "scope", *FLAGS}


@dataclass(frozen=True)
class Setting:
    name: str
    rule: Rule
    default: object  # the dbt var's default; for an OWN setting, its value without one
    meaning: str  # what it is, in one line (docs, help)
    changes: str  # what a change of it changes ("" nothing computed: a gate, a list's length)
    scope: str = COLLECTION  # VAR, COLLECTION or OWN
    recorded: bool = False  # in run_measures.evaluation_settings, the settings each value was computed under
    list_valued: bool = False  # stored one row per item
    gate: bool = False  # the regression gate's: the vars give them to gated_collection_id only
    names_runs: bool = False  # names runs that must exist (checked against the warehouse)
    across_runs: bool = False  # changes only the marts that compare a collection's runs together, no per-run model
    kind: str = ""  # the entry's rule: a key of KINDS

    @property
    def has_var(self) -> bool:
        return self.scope != OWN

    @property
    def per_collection(self) -> bool:
        return self.scope != VAR

    @property
    def changes_numbers(self) -> bool:
        return bool(self.changes)


def definition_file() -> Path:
    from retrieval_metrics.dbt_runner import project_dir

    return project_dir() / "dbt_project.yml"


def setting_of(name: object, entry: object) -> Setting:
    """One entry of the table as a Setting; InputError naming the setting and the key at fault."""
    where = f"{definition_file().name}: setting_definitions: {name}"
    if not (isinstance(name, str) and SETTING_NAME.fullmatch(name)):
        raise InputError(f"{where}: the name is not lowercase letters, digits and _ (it names SQL columns)")
    if not isinstance(entry, dict):
        raise InputError(f"{where} is not a mapping of keys (default, rule, meaning, ...)")
    kind = entry.get("rule")
    if kind not in KINDS:
        raise InputError(f"{where}: rule {kind!r} is not one of {', '.join(KINDS)}")
    needed, optional = KIND_PARAMETERS.get(str(kind), (set(), set()))
    unknown = sorted(set(entry) - KEYS - needed - optional)
    missing = sorted(({"default", "rule", "meaning"} | needed) - set(entry))
    if unknown or missing:
        raise InputError(f"{where}: " + (f"unknown key {unknown[0]!r}" if unknown else f"no key {missing[0]!r}")
                         + f" (its keys: {', '.join(sorted(KEYS | needed | optional))})")  # fmt: skip
    scope = entry.get("scope", COLLECTION)
    if scope not in (VAR, COLLECTION, OWN) or (kind in PYTHON_KINDS and scope != OWN):
        allowed = OWN if kind in PYTHON_KINDS else "build, collection or own"
        raise InputError(f"{where}: scope {scope!r} is not {allowed}")
    flags = {flag: entry.get(flag, False) for flag in FLAGS}
    for flag, value in [*flags.items(), *((key, entry[key]) for key in ("none", "exclusive") if key in entry)]:
        if not isinstance(value, bool):
            raise InputError(f"{where}: {flag} is not true or false")
    for key in ("minimum", "maximum"):
        number_type = int if kind == "integer" else int | float
        if key in entry and (isinstance(entry[key], bool) or not isinstance(entry[key], number_type)):
            what = "an integer" if kind == "integer" else "a number"
            raise InputError(f"{where}: {key} {entry[key]!r} is not {what}")
    if kind == "one_of" and not (isinstance(entry["choices"], list) and entry["choices"]):
        raise InputError(f"{where}: choices {entry['choices']!r} is not a list of values")
    rule = KINDS[str(kind)](entry)
    reason = rule(entry["default"]) if scope != OWN else None  # an own setting's default may be its absence: none
    if reason is not None:
        raise InputError(f"{where}: default {entry['default']!r} {reason}")
    return Setting(str(name), rule, entry["default"], " ".join(str(entry["meaning"]).split()),
                   str(entry.get("changes", "")), str(scope), **flags, kind=str(kind))  # fmt: skip


def definitions() -> dict[str, dict[str, object]]:
    """dbt_project.yml's setting_definitions, as YAML gives them."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    project = yaml.load(definition_file().read_text(), Loader=loader)  # noqa: S506 (a safe loader)
    table = (project.get("vars") or {}).get("setting_definitions")
    if not isinstance(table, dict) or not table:
        raise InputError(f"{definition_file()}: no vars: setting_definitions (the table of the project's settings)")
    return table


# The settings, each once, in the table's order (the docs' table follows it).
SETTINGS: tuple[Setting, ...] = tuple(setting_of(name, entry) for name, entry in definitions().items())
BY_NAME = {setting.name: setting for setting in SETTINGS}
# Names a setting had before, each with the line that refuses it (--vars, --set, rm.collection_settings); a
# stored row under an old name is read as its new one (OLD_VALUES), by int_collection_settings too
RENAMED = {"iprec_rule": "trec_eval_version"}
OLD_VALUES = {"iprec_rule": {"trec_eval_9": "9", "trec_eval_10": "10"}}


def renamed(name: str) -> str | None:
    """The one-line refusal of a setting's old name, or None."""
    if name not in RENAMED:
        return None
    values = ", ".join(f"{old} is {new}" for old, new in OLD_VALUES.get(name, {}).items())
    return f"setting {name} is now {RENAMED[name]} ({values})"


def var_settings() -> list[Setting]:
    return [setting for setting in SETTINGS if setting.has_var]


def collection_settings() -> list[Setting]:
    return [setting for setting in SETTINGS if setting.per_collection]


def shown(value: object) -> str:
    """A default as the docs show it."""
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value).lower() if isinstance(value, bool) else str(value)


def markdown_table() -> str:
    """docs/measures.md's settings table: every setting, one row each."""
    lines = ["| setting | default | values | what it is | a change changes | set per |", "|---|---|---|---|---|---|"]
    for setting in SETTINGS:
        where = {VAR: "build (`--vars`)", COLLECTION: "collection, else the var", OWN: "collection (no var)"}
        lines.append(f"| `{setting.name}` | `{shown(setting.default)}` | {setting.rule.values} | {setting.meaning} | "
                     f"{setting.changes or 'no number'} | {where[setting.scope]} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def help_lines() -> str:
    """The settings a collection can have of its own, as the CLI's help of `settings` lists them."""
    lines = [f"{s.name}: {s.rule.values}; {s.meaning}".replace("`", "") for s in collection_settings()]
    wrapped = (textwrap.fill(line, 100, initial_indent="  ", subsequent_indent="      ", break_on_hyphens=False)
               for line in lines)  # fmt: skip
    return "\n".join(wrapped)


if __name__ == "__main__":
    print(markdown_table(), end="")
