"""A collection's measure instances (its setting `measures`), checked before dbt starts.

    retrieval-metrics settings --collection C --set measures="RBP(p=0.5), RBP(p=0.8), AP(rel=2), nDCG(gains={0:0,1:1,2:3})@10"
    rm.collection_settings("C", measures=["RBP(p=0.5)", "AP(rel=2)"])

An instance is a measure of the registry that has parameters (its entry's `instance` in macros/measures.sql, e.g.
"RBP(p: probability = 0.8)"), written as ir_measures parses it, with values for some of them and @k if it takes a
cutoff. It is stored, and named in question_measures and run_measures, as ir_measures prints it: a parameter at
its default and a grade its gain map keeps left out (`RBP(p=0.8)` is `RBP`, `nDCG(gains={0:0,1:1,2:3})@10` is
`nDCG(gains={2:3})@10`). The registry is read from macros/measures.sql itself, so a measure added there can be
listed here with no other change; dbt parses the stored names again (macros/measure_instances.sql).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache

MAX_NUMBER = 999_999_999  # a cutoff, level, grade or gain: at most 9 digits, as macros/measures.sql reads them
# an entry's instance in macros/measures.sql, on one line: "instance": "AP(rel: level = 1)"
SIGNATURE = re.compile(r'"instance": "([A-Za-z][A-Za-z0-9_]*[(][^"]+[)](?:@k)?)"')
RULES = {
    "level": "an integer >= 1",
    "probability": "a number strictly between 0 and 1",
    "gains": "a map {grade: gain} of integers >= 0, e.g. {0:0,1:1,2:3}",
}  # as parameter_rules() in macros/measures.sql


@dataclass(frozen=True)
class Parameter:
    name: str
    rule: str
    default: object


def small_integer(value: object, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and minimum <= value <= MAX_NUMBER


def follows(rule: str, value: object) -> bool:
    """Whether a parameter's value (as Python parses it) follows its rule."""
    if rule == "level":
        return small_integer(value, 1)
    if rule == "probability":
        return isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 1
    return isinstance(value, dict) and all(small_integer(g, 0) and small_integer(v, 0) for g, v in value.items())


@cache
def signatures() -> dict[tuple[str, bool], tuple[Parameter, ...]]:
    """(ir_measures' name, takes a cutoff) -> its parameters, from every entry's instance in macros/measures.sql."""
    from retrieval_metrics.dbt_runner import project_dir

    found: dict[tuple[str, bool], tuple[Parameter, ...]] = {}
    for signature in SIGNATURE.findall((project_dir() / "macros" / "measures.sql").read_text()):
        family, _, rest = signature.partition("(")
        listed, _, cutoff = rest.rpartition(")")
        parameters = []
        for part in listed.split(", "):
            name, _, rule_and_default = part.partition(": ")
            rule, _, default = rule_and_default.partition(" = ")
            parameters.append(Parameter(name, rule, ast.literal_eval(default)))
        found[(family, cutoff == "@k")] = tuple(parameters)
    return found


def split(value: object) -> list[str]:
    """The instances given: a list, or one text with them comma-separated (commas inside (...) or {...} kept)."""
    if isinstance(value, list | tuple):
        return [str(item).strip() for item in value]
    items, depth, current = [], 0, ""
    for char in str(value):
        depth += {"(": 1, "{": 1, ")": -1, "}": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(current.strip())
            current = ""
        else:
            current += char
    return [*items, current.strip()] if current.strip() or items else []


def printed(family: str, values: dict[str, object], parameters: tuple[Parameter, ...], cutoff: int | None) -> str:
    """The instance as ir_measures prints it: Name(p=v,...)@k, a parameter at its default left out."""
    shown = []
    for parameter in parameters:
        value = values.get(parameter.name, parameter.default)
        if parameter.rule == "gains":
            assert isinstance(value, dict)
            if value:
                shown.append(f"{parameter.name}={{{','.join(f'{g}:{v}' for g, v in sorted(value.items()) if g != v)}}}")
        elif parameter.rule == "probability":
            if float(value) != float(parameter.default):  # type: ignore[arg-type]
                shown.append(f"{parameter.name}={float(value)!r}")  # type: ignore[arg-type]
        elif value != parameter.default:
            shown.append(f"{parameter.name}={value}")
    return family + (f"({','.join(shown)})" if shown else "") + (f"@{cutoff}" if cutoff is not None else "")


def canonical(text: str) -> str:
    """The instance as ir_measures prints it; ValueError saying what is wrong with it."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        raise ValueError("is not Name, Name(parameter=value, ...) or either with @k") from None
    cutoff = None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        if not (isinstance(node.right, ast.Constant) and small_integer(node.right.value, 1)):
            raise ValueError(f"has cutoff {ast.unparse(node.right)}, not an integer from 1 to {MAX_NUMBER}")
        cutoff, node = node.right.value, node.left
    values: dict[str, object] = {}
    if isinstance(node, ast.Call) and not node.args:
        for keyword in node.keywords:
            try:
                values[str(keyword.arg)] = ast.literal_eval(keyword.value)
            except ValueError:
                raise ValueError(f"gives {keyword.arg} {ast.unparse(keyword.value)}, not a number or a map") from None
        node = node.func
    if not isinstance(node, ast.Name):
        raise ValueError("is not Name, Name(parameter=value, ...) or either with @k")
    family = node.id
    if (family, cutoff is not None) not in signatures():
        other = (family, cutoff is None) in signatures()
        having = ", ".join(f + ("@k" if at_k else "") for f, at_k in sorted(signatures()))
        raise ValueError("needs a cutoff @k" if other and cutoff is None else "takes no cutoff" if other
                         else f"names no measure with parameters (those: {having})")  # fmt: skip
    parameters = signatures()[(family, cutoff is not None)]
    names = {parameter.name: parameter for parameter in parameters}
    for name, value in values.items():
        if name not in names:
            raise ValueError(f"has no parameter {name} (its parameters: {', '.join(names)})")
        if not follows(names[name].rule, value):
            raise ValueError(f"parameter {name}: {value!r} is not {RULES[names[name].rule]}")
        if names[name].rule == "gains" and not any(g != v for g, v in value.items()):  # type: ignore[union-attr]
            raise ValueError(f"parameter {name}: {value!r} changes no grade's gain (leave it out)")
    return printed(family, values, parameters, cutoff)


def check(value: object) -> str | None:
    """The setting's rule (retrieval_metrics/per_collection.py): why the instances are refused, naming the first
    bad one, or None."""
    if value is None or str(value).strip().lower() in {"", "none"}:
        return None
    items = split(value)
    if not items:
        return "is empty: give at least one instance, e.g. RBP(p=0.5)"
    for item in items:
        try:
            canonical(item)
        except ValueError as reason:
            return f"holds {item!r}, which {reason}"
    return None


def values(value: object) -> list[str]:
    """The rows the setting is stored as: each instance as ir_measures prints it, distinct, sorted (none: one row
    none)."""
    if value is None or str(value).strip().lower() in {"", "none"}:
        return ["none"]
    return sorted({canonical(item) for item in split(value)})
