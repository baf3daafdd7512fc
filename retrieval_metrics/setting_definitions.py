"""The one table of the project's settings (SETTINGS): each setting's name, the rule its values follow, its
default, what it means, what a change of it changes, and where it can be set. Everything else about settings is
made from it or checked against it:

- retrieval_metrics/settings.py: the check of `--vars` before dbt starts (its RULES: the settings with a dbt var);
- retrieval_metrics/per_collection.py: a collection's own settings (`retrieval-metrics settings`), their rules
  and how each value is stored (Rule.store);
- the CLI's help of `settings` (help_lines), and docs/measures.md's settings table (markdown_table; the test
  fails when the docs differ, `python -m retrieval_metrics.setting_definitions` prints the table);
- the dbt side, checked by tests/python/test_setting_definitions.py, which fails when it drifts: the vars of
  dbt_project.yml (names, order, defaults), their validation in macros/evaluation_settings.sql (the same
  choices, minimums and messages), the defaults int_collection_settings lists, and the keys of
  run_measures.evaluation_settings (int_collection_evaluation_settings).

A new setting is one Setting in SETTINGS (its rule from the constructors below), the docs table regenerated, and
its test; a setting with a dbt var also needs its var in dbt_project.yml and, if the SQL reads it, its macro
(the test names what is missing).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from retrieval_metrics import measure_instances, user_measures
from retrieval_metrics.presets import PRESETS
from retrieval_metrics.tie_rules import DEFAULT_TIE_RULE, TIE_RULES
from retrieval_metrics.warehouse import IDENTIFIER

MAX_INTEGER = 2**31 - 1  # the models' integer columns: k, relevance_level, err_max_grade, bootstrap_resamples
MAX_BIGINT = 2**63 - 1  # ... and bigint: bootstrap_seed (int_collection_evaluation_settings)
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


def integer(minimum: int, maximum: int | None = None) -> Rule:
    """An integer >= minimum (and <= maximum, for one the models store in a column that holds no more), given as a
    number or as its digits (dbt passes both)."""

    def check(value: object) -> str | None:
        text = text_of(value)
        is_integer = not isinstance(value, bool | float) and text.removeprefix("-").isdigit()
        if not (is_integer and int(text) >= minimum):
            return f"is not an integer >= {minimum}"
        return f"is more than {maximum}" if maximum is not None and int(text) > maximum else None

    words = f"an integer >= {minimum}" if maximum is None else f"an integer from {minimum} to {maximum}"
    return Rule(check, words, lambda value: [str(int(text_of(value)))], minimum=minimum, maximum=maximum)


def one_of(*choices: str) -> Rule:
    """One of the choices, compared as text (a YAML 10 is "10")."""

    def check(value: object) -> str | None:
        taken = not isinstance(value, bool | list | dict) and text_of(value) in choices
        return None if taken else f"is not one of {', '.join(choices)}"

    return Rule(check, " or ".join(f"`{choice}`" for choice in choices), choices=choices)


def _boolean(value: object) -> str | None:
    return None if isinstance(value, bool) or str(value).lower() in {"true", "false"} else "is not true or false"


BOOLEAN = Rule(_boolean, "`true` or `false`", lambda value: [text_of(value).lower()])


def _probability(value: object) -> str | None:
    number = number_of(value)
    return None if number is not None and 0 < number < 1 else "is not a number between 0 and 1 (exclusive)"


PROBABILITY = Rule(_probability, "a number between 0 and 1 (exclusive)", lambda value: [repr(float(text_of(value)))])


def _kappa(value: object) -> str | None:
    if text_of(value).lower() == NONE:
        return None
    number = number_of(value)
    return None if number is not None and -1 <= number <= 1 else "is not none or a number from -1 to 1"


KAPPA = Rule(_kappa, "`none` or a number from -1 to 1",
             lambda value: [NONE if is_none(value) else repr(float(text_of(value)))])  # fmt: skip


def _most_docs(value: object) -> str | None:
    if text_of(value).lower() == NONE:
        return None
    return None if integer(1, MAX_INTEGER)(value) is None else f"is not none or an integer from 1 to {MAX_INTEGER}"


MOST_DOCS = Rule(_most_docs, f"`none` or an integer from 1 to {MAX_INTEGER}",
                 lambda value: [NONE if text_of(value).lower() == NONE else str(int(text_of(value)))])  # fmt: skip


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

# Where a setting can be set
VAR = "build"  # a dbt var only, the same for every collection of a build
COLLECTION = "collection"  # a collection's own (`retrieval-metrics settings`), else the dbt var's
OWN = "collection, no var"  # a collection's own only; without one, `default`


@dataclass(frozen=True)
class Setting:
    name: str
    rule: Rule
    default: object  # the dbt var's default as dbt_project.yml gives it; for an OWN setting, its value without one
    meaning: str  # what it is, in one line (docs, help)
    changes: str  # what a change of it changes ("" nothing computed: a gate, a list's length)
    scope: str = COLLECTION  # VAR, COLLECTION or OWN
    recorded: bool = False  # in run_measures.evaluation_settings, the settings each value was computed under
    list_valued: bool = False  # stored one row per item
    gate: bool = False  # the regression gate's: the vars give them to gated_collection_id only
    names_runs: bool = False  # names runs that must exist (checked against the warehouse)

    @property
    def has_var(self) -> bool:
        return self.scope != OWN

    @property
    def per_collection(self) -> bool:
        return self.scope != VAR

    @property
    def changes_numbers(self) -> bool:
        return bool(self.changes)


# The settings, each once. The settings with a dbt var come in dbt_project.yml's order (the test checks it).
# A new setting: one row here (where it belongs among its kind), docs regenerated, its test.
SETTINGS: tuple[Setting, ...] = (
    Setting("preset", one_of(*PRESETS), NONE,
            "a community's way of reporting (retrieval_metrics/presets.py): its settings and headline measures; "
            "recorded with the settings overridden since", "", OWN, recorded=True),
    Setting("k_values", CUTOFFS, [1, 3, 5, 10, 100], "the cutoffs k of every @k measure",
            "measures", recorded=True, list_valued=True),
    Setting("averaging", one_of("all_questions", "retrieved_only"), "all_questions",
            "which questions a run's mean is over: every question (trec_eval -c) or those the run answers "
            "(trec_eval's default)", "measures", recorded=True),
    Setting("relevance_level", integer(0, MAX_INTEGER), 1,
            "the lowest grade that counts as relevant (trec_eval -l); NDCG's gains do not change", "measures",
            recorded=True),
    Setting("judged_docs_only", BOOLEAN, False, "drop documents without a grade >= 0 from every ranking first "
            "(trec_eval -J)", "measures", recorded=True),
    Setting("ignore_identical_ids", BOOLEAN, False, "drop a retrieved document whose id is the question's, those "
            "below moving up (BEIR's)", "measures", recorded=True),
    Setting("max_docs_per_question", MOST_DOCS, NONE, "measure only each ranking's top N (trec_eval -M), cut "
            "after ignore_identical_ids and before judged_docs_only", "measures", recorded=True),
    Setting("trec_eval_version", one_of("9", "10"), 9,
            "the trec_eval whose numbers to give: 9 (and pytrec_eval) ranks scores as 32-bit floats and counts "
            "iprec's recall level as (long)(level * R + 0.9); 10 ranks the scores as doubles and uses lround. "
            "A change re-ranks the collection's runs", "ranks, iprec_at_recall, 11pt_avg", recorded=True),
    Setting("err_max_grade", integer(1, MAX_INTEGER), 4, "ERR's grade scale: grade g stops the reader with "
            "probability (2^g - 1) / 2^err_max_grade (gdeval's 4)", "ERR", recorded=True),
    Setting("rbp_persistence", PROBABILITY, 0.9, "rbp's and rbp_resid's p: the reader goes on with probability p "
            "(trec_eval's 0.9)", "rbp, rbp_resid", recorded=True),
    Setting("qrels_version", VERSION, "latest", "which version of the collection's judgments the measures use "
            "(0: the base qrels; docs/judging.md)", "measures", recorded=True),
    Setting("rbo_persistence", PROBABILITY, 0.9, "rank-biased overlap's p between two versions' leaderboards "
            "(qrels_version_leaderboard_changes)", "rbo", VAR),
    Setting("bootstrap_resamples", integer(1, MAX_INTEGER), 1000, "the 95% bootstrap intervals' resamples",
            "intervals"),
    Setting("bootstrap_seed", integer(0, MAX_BIGINT), 20261203, "the bootstrap's seed", "intervals"),
    Setting("max_outranking_docs_listed", integer(0), 10, "how many outranking docs missed_relevant_docs lists",
            "", VAR),
    Setting("baseline_run_id", BASELINES, NONE, "the runs the collection's runs are compared with, each run "
            "with each baseline but itself; none: no comparisons", "comparisons", list_valued=True, names_runs=True),
    Setting("n_permutations", integer(1), 10000, "the paired randomization test's resamples (exact when "
            "2^questions <= it)", "p-values", VAR),
    Setting("permutation_seed", integer(0), 20261202, "the randomization test's seed", "p-values", VAR),
    Setting("alpha", PROBABILITY, 0.05, "the significance level of the all-pairs tests, the letter groups, "
            "discriminative power and the topic set size design", "groups, questions needed"),
    Setting("power", PROBABILITY, 0.8, "the power of the topic set size design", "questions needed"),
    Setting("target_differences", DIFFERENCES, [0.02, 0.05, 0.1], "the differences the topic set size design "
            "gives the questions needed for", "questions needed", list_valued=True),
    Setting("hsd_permutations", integer(1, MAX_INTEGER), 1000, "the randomized Tukey HSD's permutations of the "
            "runs' values within each question (seed permutation_seed)", "HSD p-values, groups"),
    Setting("test_all_runs", BOOLEAN, False, "the tests of the per-run tables check every run, not only those "
            "the build computes", "", VAR),
    Setting("gated_collection_id", IDENTIFIER_RULE, "docent", "the collection the gate's vars apply to", "", VAR,
            names_runs=True),
    Setting("gated_run_ids", IDENTIFIERS, ["keyword_normalized", "bm25"], "the runs the regression gate holds to "
            "every baseline (none: nothing gated)", "", list_valued=True, gate=True, names_runs=True),
    Setting("gated_measures", MEASURE_NAMES, ["ndcg_cut_2", "recall_2"], "the measures the regression gate "
            "checks", "", list_valued=True, gate=True),
    Setting("min_judge_kappa", KAPPA, NONE, "the judge gate: an automatic judge whose Cohen's kappa with people "
            "is below it fails the build", ""),
    Setting("tie_rule", one_of(*TIE_RULES), DEFAULT_TIE_RULE,
            "how every writer of a run orders equal scores: trec_eval (as the collection's trec_eval_version "
            "ranks, ties by doc id descending) or doc_order (the collection's document order). A change "
            "re-ranks the collection's runs", "ranks", OWN),
    Setting("measures", MEASURE_INSTANCES, NONE, "the measure instances it reports beside the defaults, each a "
            "row of run_measures named as ir_measures prints it (docs/measures.md#measure-instances)",
            "its instances", OWN, list_valued=True),
    Setting("user_measures", USER_MEASURES, NONE, "measures users define (retrieval_metrics/user_measures.py), "
            "computed beside the registry's; stored as their definitions, not their files", "its user measures",
            OWN, list_valued=True),
)  # fmt: skip
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
