"""Judge plug-ins for tests/python/test_judge.py, loaded by `judge --judge plugin_judges:NAME` (this folder on
PYTHONPATH): one that answers in each accepted shape, and one per way a judge can go wrong."""

from __future__ import annotations

import time

__version__ = "0.1"  # no judge here has a version attribute: this is what is recorded

GARBAGE: dict[str, object] = {
    "none": None,
    "str": "relevant",
    "float": 1.5,
    "bool": True,
    "triple": (1, "why", "extra"),
    "single": (1,),
    "no_grade": {"rationale": "forgot the grade"},
    "huge": 2**31,
    "very_negative": -(2**31) - 1,
    "float_in_pair": (2.0, "close enough"),
    "rationale_not_str": (1, 42),
    "grade_none_in_mapping": {"grade": None},
    "surrogate": (1, "half a pair \ud800"),
}


class Shaped:
    """Grade = len(doc_id) % 3, in the shape `shape` names: int, pair, list, mapping, mapping_bare."""

    def __init__(self, shape: str = "int") -> None:
        self.shape = shape

    def judge(self, item: object) -> object:
        doc_id = getattr(item, "doc_id")
        grade = len(doc_id) % 3
        why = f"{getattr(item, 'question_id')}/{doc_id}"
        return {
            "int": grade,
            "pair": (grade, why),
            "list": [grade, why],
            "mapping": {"grade": grade, "rationale": why, "confidence": 0.5},
            "mapping_bare": {"grade": grade},
        }[self.shape]


class Broken:
    """Answers grade 1 until its `at`-th call, which goes wrong in the way `problem` names: raises (ValueError),
    exit (SystemExit), interrupt (KeyboardInterrupt), hang, or returns one of GARBAGE."""

    def __init__(self, problem: str = "raises", at: int = 1) -> None:
        self.problem, self.at, self.calls = problem, at, 0

    def judge(self, item: object) -> object:
        self.calls += 1
        if self.calls < self.at:
            return 1
        if self.problem == "raises":
            raise ValueError("boom")
        if self.problem == "exit":
            raise SystemExit("judge quit")
        if self.problem == "interrupt":
            raise KeyboardInterrupt
        if self.problem == "hang":
            time.sleep(3600)
        return GARBAGE[self.problem]


class CannotBuild:
    """A factory that exits while being built."""

    def __init__(self) -> None:
        raise SystemExit("no model")


def not_a_judge() -> object:
    """Builds something with no judge method."""
    return object()
