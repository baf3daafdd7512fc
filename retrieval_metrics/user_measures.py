"""Measures users define, outside the package's files, registered by a collection's setting `user_measures`:

    retrieval-metrics settings --collection C --set user_measures=my_measures.py
    rm.collection_settings("C", user_measures="my_measures.py")

The file's MEASURES lists them, each one of:

- define_sql(name, sql): an aggregate over one question's judged retrieved documents, as the registry's entries
  are (macros/measures.sql): it reads the columns of SQL_INPUTS (position, relevance, is_relevant, gain,
  num_rel, num_ret, ...) at the collection's settings, over the whole ranking;
- define_byquery(name, function): a Python function of one question's judgments and ranking, as ir_measures'
  define_byquery takes it: `function(qrels, run)` with qrels a pandas DataFrame of query_id, doc_id, relevance
  and run one of query_id, doc_id, score, rank (rank order: the warehouse's ties broken), giving a number.

Each is checked when the setting is given, before dbt starts: a bad one is refused in one line naming the file
and the measure (SQL: DuckDB runs it on sample rows; Python: called on a sample question). Each is stored as one
row of raw.collection_settings (JSON: its name, kind, description and SQL, or its file's source and its function's
name), so the warehouse, not the file, holds what the build computes; dbt computes the SQL ones in
question_measures (macros/user_measures.sql) and the Python ones in int_user_measure_values, and every mart
after (run_measures with its interval, the comparisons, the report, serving) takes them as any measure.
docs/examples/user_measures.py is a worked example.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
# what a SQL measure reads, as instance_input_columns() in macros/measures.sql (k, ideal_dcg: the whole ranking's)
SQL_INPUTS = ["num_rel", "num_ret", "num_judged_nonrel", "position", "relevance", "is_relevant", "gain", "err_gain",
              "rbp_gain", "rbp_weight", "relevant_so_far", "nonrelevant_above", "err_continue", "k", "ideal_dcg"]  # fmt: skip
# sample rows for the check: one question, three judged documents (ranks 1, 2, 4), a relevant and two not
SAMPLE = """select * from (values
    (3, 5, 2, 1, 2, true, 2.0, 0.1875, 0.2, 0.1, 1, 0, 0.8125, null, 3.63),
    (3, 5, 2, 2, 0, false, 0.0, 0.0, 0.0, 0.09, 1, 0, 1.0, null, 3.63),
    (3, 5, 2, 4, 1, true, 1.0, 0.0625, 0.1, 0.0729, 2, 1, 0.9375, null, 3.63)
) as inputs({columns})"""


@dataclass(frozen=True)
class UserMeasure:
    name: str
    kind: str  # sql or python
    description: str
    sql: str | None = None
    function: Callable[..., Any] | None = None


def define_sql(name: str, sql: str, description: str = "") -> UserMeasure:
    """A measure whose per-question value is the aggregate `sql` over the question's judged retrieved documents."""
    return UserMeasure(name, "sql", description, sql=sql)


def define_byquery(name: str, function: Callable[..., Any], description: str = "") -> UserMeasure:
    """A measure whose per-question value is `function(qrels, run)` (ir_measures' define_byquery)."""
    return UserMeasure(name, "python", description, function=function)


def registry_names() -> set[str]:
    """The registry's measure names and instance families (macros/measures.sql): a user measure takes none."""
    from retrieval_metrics.dbt_runner import project_dir

    text = (project_dir() / "macros" / "measures.sql").read_text()
    return set(re.findall(r'"name": "([^"]+)"', text)) | set(re.findall(r'"instance": "([A-Za-z][A-Za-z0-9_]*)', text))


def paths_of(value: object) -> list[str]:
    items = value if isinstance(value, list | tuple) else str(value).split(",")
    return [str(item).strip() for item in items if str(item).strip()]


def is_none(value: object) -> bool:
    return value is None or (not isinstance(value, list | tuple) and str(value).strip().lower() in {"", "none"})


def loaded(path: Path) -> tuple[list[UserMeasure], str]:
    """The file's MEASURES and its source; ValueError saying why not."""
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    if path.suffix != ".py":
        raise ValueError(f"{path}: not a Python file (.py)")
    package = Path(__file__).resolve().parent
    if package in path.resolve().parents:
        raise ValueError(f"{path}: is inside the package; a user's measures live outside it")
    source = path.read_text()
    spec = importlib.util.spec_from_file_location(f"retrieval_metrics_user_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    except Exception as error:  # the user's code: any error is theirs, said in one line
        first_line = str(error).splitlines()[0] if str(error) else ""
        raise ValueError(f"{path}: does not run: {type(error).__name__}: {first_line}") from None
    measures = getattr(module, "MEASURES", None)
    if not isinstance(measures, list | tuple) or not all(isinstance(m, UserMeasure) for m in measures) or not measures:
        raise ValueError(f"{path}: has no MEASURES, a list of define_sql(...) and define_byquery(...)")
    return list(measures), source


def sql_problem(sql: str) -> str | None:
    """Why DuckDB cannot compute the SQL as a measure over sample rows, or None."""
    import duckdb

    if ";" in sql:
        return "its SQL holds ';': give one expression"
    constants = "num_rel, num_ret, num_judged_nonrel, k, ideal_dcg"
    query = (f"select cast(({sql}) as double) from ({SAMPLE.format(columns=', '.join(SQL_INPUTS))}) "
             f"group by {constants}")  # fmt: skip
    try:
        with duckdb.connect() as con:
            rows = con.execute(query).fetchall()
    except duckdb.Error as error:
        return f"its SQL fails on sample rows: {str(error).splitlines()[0]}"
    return None if len(rows) == 1 else "its SQL is not one value per question (an aggregate, as the registry's)"


def python_problem(function: Callable[..., Any]) -> str | None:
    """Why the function is not one of (qrels, run) giving a number on a sample question, or None."""
    import pandas as pd

    name = getattr(function, "__name__", "")
    if not callable(function) or not name.isidentifier() or name == "<lambda>":
        return "its function is not a named function (def name(qrels, run): ...), which the warehouse can store"
    qrels = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "relevance": [2, 0, 1]})
    run = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "x", "c"], "score": [3.0, 2.0, 1.0], "rank": [1, 2, 3]})
    try:
        value = function(qrels, run)
    except Exception as error:  # the user's code
        return f"its function fails on a sample question: {type(error).__name__}: {error}"
    number = as_number(value)
    return None if number is not None else f"its function gives {value!r}, not a number"


def as_number(value: object) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and not isinstance(value, bool) else None


def definitions(value: object) -> list[dict[str, str]]:
    """The measures of the files given, each as the row that stores it; ValueError naming the file and measure."""
    found: dict[str, dict[str, str]] = {}
    reserved = registry_names()
    for given in paths_of(value):
        path = Path(given).expanduser()
        measures, source = loaded(path)
        for measure in measures:
            where = f"{path}: measure {measure.name!r}"
            if not isinstance(measure.name, str) or not NAME.fullmatch(measure.name):
                raise ValueError(f"{where}: not a name (a letter, then letters, digits or _)")
            if measure.name in reserved:
                raise ValueError(f"{where}: is the registry's (macros/measures.sql); give it another name")
            if measure.name in found:
                raise ValueError(f"{where}: is defined twice")
            is_sql = measure.kind == "sql"
            problem = sql_problem(str(measure.sql)) if is_sql else python_problem(measure.function)  # type: ignore[arg-type]
            if problem:
                raise ValueError(f"{where}: {problem}")
            row = {"name": measure.name, "kind": measure.kind, "description": str(measure.description),
                   "file": str(path)}
            if measure.kind == "sql":
                row["sql"] = " ".join(str(measure.sql).split())
            else:
                row["source"], row["function"] = source, measure.function.__name__  # type: ignore[union-attr]
            found[measure.name] = row
    return [found[name] for name in sorted(found)]


def check(value: object) -> str | None:
    """The setting's rule: why the files are refused, naming the file and the measure, or None."""
    if is_none(value):
        return None
    if not paths_of(value):
        return "is empty: give a file of measures, e.g. my_measures.py"
    try:
        definitions(value)
    except ValueError as reason:
        return f"refused: {reason}"
    return None


def values(value: object) -> list[str]:
    """The rows the setting is stored as: one JSON object per measure, by name (none: one row none)."""
    if is_none(value):
        return ["none"]
    return [json.dumps(row, sort_keys=True) for row in definitions(value)]


def shown(stored: str) -> str:
    """A stored row as `settings` shows it: the measure's name and kind."""
    if stored == "none":
        return stored
    row = json.loads(stored)
    return f"{row['name']} ({row['kind']})"


def stored_function(source: str, function: str) -> Callable[..., Any]:
    """The function a stored row names, from its file's stored source (run in a module of its own)."""
    module = type(sys)("retrieval_metrics_user_measure")
    exec(compile(source, "<user measure>", "exec"), module.__dict__)  # noqa: S102 - the user's own, stored by them
    return module.__dict__[function]
