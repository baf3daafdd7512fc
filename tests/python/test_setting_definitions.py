"""One definition per setting (retrieval_metrics/setting_definitions.py): the check of --vars, a collection's own
settings, the CLI's help and docs/measures.md's table are made from it, and the dbt side is checked against it
here, so that a drift fails: dbt_project.yml's vars (names, order, defaults), their validation in the macros
(choices, minimums, maximums and messages), the defaults int_collection_settings lists, and the keys of
run_measures.evaluation_settings. Also: the old name iprec_rule is refused in one line naming the new one, and
read as it where it is stored; trec_eval_version decides how a score is held when runs are ranked. No dbt."""

from __future__ import annotations

import re

import numpy as np
import pytest
import yaml

from conftest import REPO_ROOT
from retrieval_metrics import per_collection, settings
from retrieval_metrics.cli import main as cli
from retrieval_metrics.per_collection import with_new_names
from retrieval_metrics.presets import PRESETS, preset_name
from retrieval_metrics.setting_definitions import (
    BOOLEAN,
    COLLECTION,
    SETTINGS,
    collection_settings,
    help_lines,
    markdown_table,
    var_settings,
)
from retrieval_metrics.tie_rules import TREC_EVAL, TREC_EVAL_10, Ties, order_by
from retrieval_metrics.warehouse import InputError

MACROS = [REPO_ROOT / "macros" / name
          for name in ("evaluation_settings.sql", "cutoffs.sql", "qrels_version_history.sql")]  # fmt: skip
SETTINGS_MODEL = REPO_ROOT / "models" / "intermediate" / "int_collection_settings.sql"
EVALUATION_MODEL = REPO_ROOT / "models" / "intermediate" / "int_collection_evaluation_settings.sql"
# values, one of which each rule refuses (for the message the macros must give)
BAD_VALUES = ["x", "-5", "0", "1", "latest", "", "3000000000"]


def macro_bodies() -> dict[str, str]:
    """Every macro of the files that validate vars, and int_collection_settings' Jinja, by name."""
    bodies = {}
    for path in MACROS:
        for name, body in re.findall(r"{% macro (\w+)\(.*?%}(.*?){%- endmacro %}", path.read_text(), re.DOTALL):
            bodies[name] = body
    bodies["int_collection_settings"] = SETTINGS_MODEL.read_text()
    return bodies


def dbt_validations(name: str) -> list[tuple[str, str]]:
    """How the dbt side checks var `name`: (kind, text) for each call of choice_var, integer_var or boolean_var
    naming it, and ("macro", body) for each macro that reads var('name') itself."""
    found = []
    for macro, body in macro_bodies().items():
        for kind, arguments in re.findall(rf"(choice_var|integer_var|boolean_var)\('{name}'(.*?)\)\)", body):
            found.append((kind, arguments))
        if macro not in {"choice_var", "integer_var", "boolean_var"} and re.search(rf"(?<!\w)var\('{name}'\)", body):
            found.append(("macro", body))
    return found


def test_the_docs_table_is_the_definitions() -> None:
    text = (REPO_ROOT / "docs" / "measures.md").read_text()
    start = text.index("<!-- settings table: generated from retrieval_metrics/setting_definitions.py -->\n")
    end = text.index("<!-- end of the settings table -->")
    assert text[text.index("\n", start) + 1 : end] == markdown_table(), (
        "docs/measures.md's settings table differs: paste `python -m retrieval_metrics.setting_definitions`")
    assert [line.split("`")[1] for line in markdown_table().splitlines()[2:]] == [s.name for s in SETTINGS]


def test_the_dbt_vars_are_the_definitions_in_order_with_their_defaults() -> None:
    project_vars = yaml.safe_load((REPO_ROOT / "dbt_project.yml").read_text())["vars"]
    assert list(project_vars) == [s.name for s in var_settings()]
    for setting in var_settings():
        assert project_vars[setting.name] == setting.default, setting.name
        assert setting.rule(setting.default) is None, setting.name
    assert list(settings.RULES) == list(project_vars)


def test_the_macros_check_each_var_as_its_rule_does() -> None:
    """Every setting with a var that a macro reads is checked there as the table's rule checks it: the same
    choices, minimum and maximum, or (a macro of its own) the same message for a refused value."""
    read_by_dbt = {s.name for s in var_settings() if dbt_validations(s.name)}
    one_valued_per_collection = {s.name for s in var_settings() if s.scope == COLLECTION and not s.list_valued}
    assert one_valued_per_collection <= read_by_dbt, one_valued_per_collection - read_by_dbt
    for setting in var_settings():
        for kind, text in dbt_validations(setting.name):
            rule = setting.rule
            if kind == "choice_var":
                assert tuple(re.findall(r"'([^']*)'", text)) == rule.choices, setting.name
            elif kind == "integer_var":
                bounds = [int(number) for number in re.findall(r"-?\d+", text)]
                assert bounds == [rule.minimum] + ([rule.maximum] if rule.maximum is not None else []), setting.name
            elif kind == "boolean_var":
                assert rule is BOOLEAN, setting.name
            elif setting.name != "k_values":  # cutoffs.sql: checked below
                reason = next(rule(bad) for bad in BAD_VALUES if rule(bad) is not None)
                assert f'" {reason}"' in text, (setting.name, reason)
    cutoffs = macro_bodies()["cutoff_values"]
    assert str(per_collection.BY_NAME["k_values"].rule(["99999999999"])).endswith("more than 2147483647")
    assert "2147483647" in cutoffs and "not a positive integer" in cutoffs


def test_int_collection_settings_lists_every_default_and_records_every_recorded_setting() -> None:
    model = SETTINGS_MODEL.read_text()
    defaults = model[model.index("defaults.extend([") : model.index("]) %}")]
    listed = set(re.findall(r"\('(\w+)', [\w(]", defaults))
    expected = {s.name for s in collection_settings() if s.has_var and not s.list_valued}
    assert listed == expected, (listed ^ expected)
    assert "cutoff_values()" in model and "['gated_run_ids', 'gated_measures']" in model
    assert "target_differences()" in model and "baseline_runs()" in model
    with_var = {s.name for s in collection_settings() if s.list_valued and s.has_var}
    assert with_var == {"k_values", "baseline_run_id", "gated_run_ids", "gated_measures", "target_differences"}
    recorded = re.findall(r'"(\w+)": ', EVALUATION_MODEL.read_text())
    assert recorded == sorted(recorded) == sorted(s.name for s in SETTINGS if s.recorded)


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
