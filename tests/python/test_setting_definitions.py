"""One definition per setting (dbt_project.yml's setting_definitions, read by retrieval_metrics/setting_definitions.py
and by the macro setting()): the table's schema refuses a bad entry naming it and the key; the macro refuses each
var the Python rule refuses, with its message, and gives the rows the rule stores (rendered here, no dbt: its
Jinja against each rule, on values of every kind); the check of --vars, a collection's own settings, the CLI's
help and docs/measures.md's table are made from the table. Also: the old name iprec_rule is refused in one line
naming the new one, and read as it where it is stored; trec_eval_version decides how a score is held when runs
are ranked."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import SimpleNamespace

import jinja2
import jinja2.sandbox
import numpy as np
import pytest

from conftest import REPO_ROOT
from retrieval_metrics import per_collection, settings
from retrieval_metrics.cli import main as cli
from retrieval_metrics.per_collection import with_new_names
from retrieval_metrics.presets import PRESETS, preset_name
from retrieval_metrics.setting_definitions import (
    KINDS,
    OWN,
    PYTHON_KINDS,
    SETTINGS,
    Setting,
    collection_settings,
    definitions,
    help_lines,
    markdown_table,
    setting_of,
    var_settings,
)
from retrieval_metrics.tie_rules import DEFAULT_TIE_RULE, TREC_EVAL, TREC_EVAL_10, Ties, order_by
from retrieval_metrics.warehouse import InputError

MACROS = REPO_ROOT / "macros" / "evaluation_settings.sql"
# values of every kind a var may be given (--vars parses YAML: text, numbers, yes-or-no, lists, null, mappings)
PROBES: list[object] = [
    "x", "-5", "0", "1", "2", "9", "10", 9, 10, 1, 0, -1, 1.5, 0.5, "0.5", "5e-1", "1e-3", "nan", "inf", True, False,
    "true", "False", "none", "None", "", None, "latest", "LATEST", "3000000000", 3000000000, 99999999999999999999,
    2147483647, "2147483648", 9223372036854775807, "9223372036854775808",
    "1,5,10", " 10, 1,10", [1, 5], [5, "1", 5], [0], [-1], [], [1, "abc"], ["a", "b b"], [True], [None], [2147483648],
    ["ndcg_cut_10", "map", "Judged@10"], ["x'y"], "bm25", "bm25'", " bm25", "a b", "x@y", "x.y-z", "a\\b",
    [0.02, 0.05], "0.02, -1", "0.1,0.1", [1e300], {"a": 1}, "all_questions", "retrieved_only",
    "keyword_normalized,bm25", "bm25,bm25", "none,bm25", "bm25,", ["splade", "bm25"], [None, "bm25"],
]  # fmt: skip


class CompilerError(Exception):
    pass


class MacroReturn(Exception):  # noqa: N818 (dbt's name: how {{ return(x) }} leaves a macro)
    def __init__(self, value: object) -> None:
        self.value = value


GIVEN: dict[str, object] = {}  # the --vars the macros see


@cache
def macros() -> dict[str, Callable[..., object]]:
    """macros/evaluation_settings.sql's macros, called as dbt calls them (return() gives the value), with the
    --vars GIVEN: var() as dbt's, the table from dbt_project.yml."""
    table = definitions()
    missing = object()

    def var(name: str, default: object = missing) -> object:
        if name == "setting_definitions":
            return table
        if name in GIVEN:
            return GIVEN[name]
        assert default is not missing, f"var {name} without a default"
        return default

    def raise_compiler_error(message: str) -> None:
        raise CompilerError(message)

    def returned(value: object) -> None:
        raise MacroReturn(value)

    text = MACROS.read_text()
    names = re.findall(r"{% macro (\w+)\(", text)
    raw: dict[str, Callable[..., object]] = {}

    def called(name: str) -> Callable[..., object]:
        def call(*args: object) -> object:
            try:
                return raw[name](*args)
            except MacroReturn as returning:
                return returning.value

        return call

    wrapped = {name: called(name) for name in names}
    context = {**wrapped, "var": var, "return": returned, "modules": SimpleNamespace(re=re),
               "exceptions": SimpleNamespace(raise_compiler_error=raise_compiler_error)}  # fmt: skip
    environment = jinja2.sandbox.SandboxedEnvironment(extensions=["jinja2.ext.do"])
    module = environment.from_string(re.sub(r"{% macro (\w+)\(", r"{% macro raw_\1(", text), globals=context).module
    raw.update({name: getattr(module, f"raw_{name}") for name in names})
    return wrapped


def test_the_docs_table_is_the_definitions() -> None:
    text = (REPO_ROOT / "docs" / "measures.md").read_text()
    start = text.index("<!-- settings table: generated from retrieval_metrics/setting_definitions.py -->\n")
    end = text.index("<!-- end of the settings table -->")
    assert text[text.index("\n", start) + 1 : end] == markdown_table(), (
        "docs/measures.md's settings table differs: paste `python -m retrieval_metrics.setting_definitions`")
    assert [line.split("`")[1] for line in markdown_table().splitlines()[2:]] == [s.name for s in SETTINGS]


def test_the_settings_are_the_table_in_its_order_with_their_defaults() -> None:
    assert [s.name for s in SETTINGS] == list(definitions())
    assert list(settings.RULES) == [s.name for s in var_settings()] == list(settings.project_defaults())
    for setting in var_settings():
        assert setting.rule(setting.default) is None, setting.name
        assert settings.project_defaults()[setting.name] == definitions()[setting.name]["default"]
    assert {s.kind for s in SETTINGS} <= set(KINDS)
    assert all(s.scope == OWN for s in SETTINGS if s.kind in PYTHON_KINDS)
    assert per_collection.BY_NAME["tie_rule"].default == DEFAULT_TIE_RULE


@pytest.mark.parametrize(("entry", "message"), [
    ({"defualt": 1, "rule": "boolean", "meaning": "m"}, "unknown key 'defualt'"),
    ({"default": 1, "rule": "integer", "meaning": "m"}, "no key 'minimum'"),
    ({"default": 1, "rule": "integer", "minimum": 0, "choices": [1], "meaning": "m"}, "unknown key 'choices'"),
    ({"default": 1, "rule": "float", "meaning": "m"}, "rule 'float' is not one of one_of, integer, number, "),
    ({"default": 1, "rule": "boolean"}, "no key 'meaning'"),
    ({"default": "maybe", "rule": "boolean", "meaning": "m"}, "default 'maybe' is not true or false"),
    ({"default": 0, "rule": "integer", "minimum": 1, "meaning": "m"}, "default 0 is not an integer >= 1"),
    ({"default": "x", "rule": "tie_rule", "meaning": "m"}, "scope 'collection' is not own"),
    ({"default": 1, "rule": "boolean", "meaning": "m", "scope": "run"}, "scope 'run' is not build, collection or own"),
    ({"default": 1, "rule": "boolean", "meaning": "m", "recorded": "yes"}, "recorded is not true or false"),
    ({"default": 1, "rule": "integer", "minimum": "0", "meaning": "m"}, "minimum '0' is not an integer"),
    ({"default": 1, "rule": "number", "maximum": True, "meaning": "m"}, "maximum True is not a number"),
    ({"default": 1, "rule": "number", "none": "yes", "meaning": "m"}, "none is not true or false"),
    ({"default": "a", "rule": "one_of", "choices": "a", "meaning": "m"}, "choices 'a' is not a list of values"),
    ([1], "is not a mapping of keys"),
])  # fmt: skip
def test_a_bad_entry_is_refused_naming_the_setting_and_the_key(entry: object, message: str) -> None:
    separator = "" if isinstance(entry, list) else ":"
    where = f"dbt_project.yml: setting_definitions: new_one{separator}"
    with pytest.raises(InputError, match=re.escape(f"{where} {message}")):
        setting_of("new_one", entry)
    with pytest.raises(InputError, match="setting_definitions: New-One: the name is not lowercase letters"):
        setting_of("New-One", entry)


def test_a_project_without_the_table_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "dbt_project.yml").write_text("name: p\nvars: {k_values: [1]}\n")
    monkeypatch.setenv("DBT_PROJECT_DIR", str(tmp_path))
    with pytest.raises(InputError, match="no vars: setting_definitions"):
        definitions()


@pytest.mark.parametrize("setting", var_settings(), ids=lambda setting: setting.name)
def test_the_macro_refuses_what_the_rule_refuses_and_stores_what_it_stores(setting: Setting) -> None:
    """setting(name) in dbt, on every probe given as the var: refused with the rule's reason, or taken and stored
    (stored_setting: int_collection_settings' default rows) as the rule stores it."""
    for value in PROBES:
        reason = setting.rule(value)
        GIVEN.clear()
        GIVEN[setting.name] = value
        called = macros()
        if reason is not None:
            with pytest.raises(CompilerError) as refused:
                called["setting"](setting.name)
            assert str(refused.value) == f"var {setting.name}: {value} {reason}", (setting.name, value)
        else:
            stored = called["stored_setting"](setting.name)
            assert stored == setting.rule.store(value), (setting.name, value)


@pytest.mark.parametrize("entry", [
    {"default": 0, "rule": "number", "minimum": 0},
    {"default": 1, "rule": "number", "maximum": 5, "exclusive": True},
    {"default": 0.5, "rule": "number", "minimum": 0.5, "maximum": 2.5},
    {"default": "none", "rule": "number", "minimum": -1, "none": True},
    {"default": "none", "rule": "integer", "minimum": -3, "maximum": 7, "none": True},
    {"default": 1, "rule": "integer", "minimum": 1},
    {"default": "a", "rule": "one_of", "choices": ["a", 1, "10"]},
], ids=str)  # fmt: skip
def test_each_kind_with_other_parameters_is_checked_alike(entry: dict[str, object]) -> None:
    """The kinds' parameters as no setting has them yet: the macro's check is the rule's."""
    rule = setting_of("new_one", {**entry, "meaning": "m"}).rule
    for value in PROBES:
        checked = macros()["checked_setting"](entry, value)
        assert checked["reason"] == rule(value), (entry, value)
        if checked["reason"] is None:
            assert [str(checked["value"]).lower() if isinstance(checked["value"], bool) else str(checked["value"])
                    ] == rule.store(value), (entry, value)  # fmt: skip


def test_the_macro_gives_each_default_as_the_rule_stores_it_and_no_var_for_a_collections_own() -> None:
    GIVEN.clear()
    called = macros()
    for setting in var_settings():
        assert called["stored_setting"](setting.name) == setting.rule.store(setting.default), setting.name
    for setting in SETTINGS:
        if not setting.has_var:
            with pytest.raises(CompilerError, match=f"setting {setting.name} has no var"):
                called["setting"](setting.name)
    with pytest.raises(CompilerError, match="no setting k_value in dbt_project.yml's setting_definitions"):
        called["setting"]("k_value")


def test_the_settings_help_lists_every_collection_setting(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli(["settings", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert " ".join(help_lines().split()) in shown
    for setting in collection_settings():
        assert f"{setting.name}: {setting.rule.values.replace('`', '')};" in shown
    for preset in PRESETS:
        assert preset in shown


def test_each_collection_setting_is_checked_and_stored_by_its_rule() -> None:
    assert list(per_collection.RULES) == [s.name for s in collection_settings()]
    for setting in collection_settings():
        value = setting.default if setting.name != "preset" else "lesson"
        assert setting.rule(value) is None and per_collection.values_of(setting.name, value), setting.name
    assert per_collection.values_of("trec_eval_version", 10) == ["10"]
    assert per_collection.values_of("k_values", "10, 1,10") == ["1", "10"]
    assert per_collection.values_of("baseline_run_id", ["splade", "bm25"]) == ["bm25", "splade"]
    assert per_collection.values_of("baseline_run_id", "splade, bm25") == ["bm25", "splade"]
    assert per_collection.values_of("baseline_run_id", ["none"]) == per_collection.values_of("baseline_run_id", "") == ["none"]
    for preset in PRESETS.values():  # every preset gives settings that exist, each at a value its rule takes
        assert all(per_collection.RULES[name](value) is None for name, value in preset.settings.items())


def test_the_old_name_iprec_rule_is_refused_naming_the_new_one_and_read_as_it_where_stored() -> None:
    message = "setting iprec_rule is now trec_eval_version (trec_eval_9 is 9, trec_eval_10 is 10)"
    with pytest.raises(InputError, match=re.escape(f"--vars: {message}")):
        settings.check_vars(None, ["--vars", "{iprec_rule: trec_eval_10}"])
    with pytest.raises(InputError, match=re.escape("var trec_eval_version: 11 is not one of 9, 10")):
        settings.check_vars(None, ["--vars", "{trec_eval_version: 11}"])
    settings.check_vars(None, ["--vars", "{trec_eval_version: 10}"])
    assert with_new_names({"iprec_rule": ["trec_eval_10"], "k_values": ["1"]}) == {
        "k_values": ["1"], "trec_eval_version": ["10"]}  # fmt: skip
    assert with_new_names({"iprec_rule": ["trec_eval_9"]}) == {"trec_eval_version": ["9"]}


def test_a_stored_preset_keeps_its_name_before_the_overridden_settings() -> None:
    assert preset_name("trec-dl-passage (overridden: relevance_level, k_values)") == "trec-dl-passage"
    assert preset_name("beir") == "beir" and preset_name(None) == ""


def test_trec_eval_version_holds_scores_as_its_trec_eval_does() -> None:
    """9 (and pytrec_eval): scores that differ past a 32-bit float's precision tie, and the doc id descending
    orders them; 10: the doubles order them. In SQL (the writers) and in numpy (the built-in retrievers)."""
    import duckdb

    doc_ids = ["a", "b", "c"]
    scores = [100.000001, 100.000002, 1e39]  # equal as 32-bit floats; 1e39 is infinity as one, not as a double
    with duckdb.connect() as con:
        con.execute("create table scored as select * from (values ('a', 100.000001), ('b', 100.000002), "
                    "('c', 1e39), ('d', 3e39)) as t(doc_id, score)")  # fmt: skip
        for rule, expected in ((TREC_EVAL, ["d", "c", "b", "a"]), (TREC_EVAL_10, ["d", "c", "b", "a"])):
            order = [d for (d,) in con.execute(f"select doc_id from scored order by {order_by(rule)}").fetchall()]
            assert order == expected
        con.execute("update scored set score = 100.000003 where doc_id = 'a'")  # a above b as doubles only
        assert [d for (d,) in con.execute(f"select doc_id from scored order by {order_by(TREC_EVAL)}").fetchall()
                ] == ["d", "c", "b", "a"]  # fmt: skip  (c, d: both infinity, tied, d first)
        assert [d for (d,) in con.execute(f"select doc_id from scored order by {order_by(TREC_EVAL_10)}").fetchall()
                ] == ["d", "c", "a", "b"]  # fmt: skip
    scores[0] = 100.000003
    assert [doc_ids[i] for i in Ties.of(TREC_EVAL, doc_ids).best(np.array(scores))] == ["c", "b", "a"]
    assert [doc_ids[i] for i in Ties.of(TREC_EVAL_10, doc_ids).best(np.array(scores))] == ["c", "a", "b"]
