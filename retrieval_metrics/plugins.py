"""Your own retriever as a plug-in: `retrieval-metrics rank --retriever package.module:name`.

The protocol (docs/plugins.md has a complete example):

    factory(documents: list[Document], **params) -> retriever      # built once per collection
    retriever.search(question: str, k: int) -> iterable of (doc_id, score)   # asked once per question

`name` is a class or any callable; `documents` are the collection's (doc_id, title, text), in the collection's
order; `params` are the `--param key=value` pairs (a value that reads as JSON is that JSON value, else a
string); `k` is how many docs the run keeps per question (`--top-k`, else every document). A higher score is
better; the run is ranked as trec_eval ranks a run file (score as a 32-bit float descending, ties by doc id
descending), so the order of the pairs does not matter. An optional `version` attribute of the retriever (or
`__version__` of its top-level package) is recorded with the run, as are the parameters and the time each
search took (raw.question_latencies).

Anything wrong fails the run with one line naming the question and the problem, and writes nothing: the
factory or a search raising, a result that is not a (doc_id, score) pair, an unknown doc id, a doc given twice,
a score that is not a finite number.
"""

from __future__ import annotations

import importlib
import json
import math
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from retrieval_metrics.retrievers import Document
from retrieval_metrics.warehouse import InputError


class Retriever(Protocol):
    def search(self, question: str, k: int) -> Iterable[tuple[str, float]]: ...


RetrieverFactory = Callable[..., Retriever]


def is_plugin(name: str) -> bool:
    """A plug-in is named `package.module:name`; a built-in retriever by a bare name."""
    return ":" in name


def parse_params(pairs: Sequence[str]) -> dict[str, object]:
    """`key=value` pairs as a dict: a value that reads as JSON (1, 0.5, true, [1, 2], "x") is that value, any
    other value is the string as given."""
    params: dict[str, object] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise InputError(f"--param {pair!r} is not key=value")
        try:
            params[key.strip()] = json.loads(value)
        except ValueError:
            params[key.strip()] = value
    return params


def load_factory(spec: str) -> RetrieverFactory:
    """The callable named by `package.module:name`, importable from the working directory or PYTHONPATH."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise InputError(f"retriever {spec!r} is not package.module:name")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # as `python -m` does: a module beside you is importable
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"retriever {spec!r}: cannot import {module_name!r} ({exc}); is it on PYTHONPATH?") from None
    except Exception as exc:  # noqa: BLE001 - the user's module failed while importing: say how, in one line
        raise InputError(f"retriever {spec!r}: importing {module_name!r} raised {described(exc)}") from None
    factory = module
    for part in attribute.split("."):
        if not hasattr(factory, part):
            raise InputError(f"retriever {spec!r}: {module_name!r} has no {attribute!r}")
        factory = getattr(factory, part)
    if not callable(factory):
        raise InputError(f"retriever {spec!r}: {attribute!r} is not callable (a class or a function)")
    return factory  # type: ignore[return-value]


def described(exc: BaseException) -> str:
    """An exception in one line: its type and the first line of its message."""
    message = (str(exc).splitlines() or [""])[0]
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def version_of(retriever: object, factory: object) -> str | None:
    """The retriever's `version` attribute, else its top-level package's `__version__`, else None."""
    version = getattr(retriever, "version", None)
    if version is None:
        package = sys.modules.get((getattr(factory, "__module__", None) or "").partition(".")[0])
        version = getattr(package, "__version__", None)
    return None if version is None else str(version)


@dataclass(frozen=True)
class PluginRun:
    """What a plug-in returned, column-wise, and what raw.runs records of it."""

    question_ids: list[str]
    doc_ids: list[str]
    scores: list[float]
    latencies_ms: dict[str, float]
    parameters: dict[str, object]


def score_of(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise TypeError
    return float(value)  # type: ignore[arg-type]


def run_plugin(
    spec: str,
    params: Mapping[str, object],
    documents: Sequence[Document],
    questions: Sequence[tuple[str, str]],
    k: int,
    advance: Callable[[int], object] = lambda _: None,
) -> PluginRun:
    """Build the plug-in once and search every question; InputError naming the question on any bad output."""
    factory = load_factory(spec)
    try:
        retriever = factory(list(documents), **params)
    except Exception as exc:  # noqa: BLE001 - the user's code: one line, nothing written
        raise InputError(f"retriever {spec!r} could not be built: {described(exc)}") from None
    if not callable(getattr(retriever, "search", None)):
        raise InputError(f"retriever {spec!r}: what it built has no search(question, k) method")
    question_ids: list[str] = []
    doc_ids: list[str] = []
    scores: list[float] = []
    latencies: dict[str, float] = {}
    for question_id, text in questions:
        started = time.perf_counter()
        try:
            results = list(retriever.search(text, k))
        except Exception as exc:  # noqa: BLE001
            raise InputError(f"question {question_id!r}: the retriever raised {described(exc)}") from None
        latencies[question_id] = (time.perf_counter() - started) * 1000.0
        for position, result in enumerate(results, 1):
            try:
                doc_id, score = result
                if not isinstance(doc_id, str):
                    raise TypeError
                value = score_of(score)
            except (TypeError, ValueError):
                raise InputError(
                    f"question {question_id!r}: result {position} ({result!r:.60}) is not a (doc_id: str, score) pair"
                ) from None
            if not math.isfinite(value):
                raise InputError(f"question {question_id!r}: doc {doc_id!r} has a non-finite score ({value})")
            question_ids.append(question_id)
            doc_ids.append(doc_id)
            scores.append(value)
        advance(1)
    parameters: dict[str, object] = {"plugin": spec, "params": dict(params)}
    version = version_of(retriever, factory)
    if version is not None:
        parameters["version"] = version
    return PluginRun(question_ids, doc_ids, scores, latencies, parameters)
