"""Your own retriever as a plug-in: `retrieval-metrics rank --retriever package.module:name`.

The protocol (docs/plugins.md has a complete example):

    factory(documents: list[Document], **params) -> retriever      # built once per collection
    retriever.search(question: str, k: int) -> iterable of (doc_id, score)   # asked once per question

`name` is a class or any callable; `documents` are the collection's (doc_id, title, text), in the collection's
order; `params` are the `--param key=value` pairs (a value that reads as JSON is that JSON value, else a
string); `k` is how many docs the run keeps per question (`--top-k`, else every document). A higher score is
better; the run is ranked by the collection's tie rule, as a run file is (trec_eval's by default: score as a
32-bit float descending, ties by doc id descending), so the order of the pairs does not matter. An optional
`version` attribute of the retriever (or `__version__` of its top-level package) is recorded with the run, as are
the parameters and the time each search took (raw.question_latencies).

The factory and every search run on one worker thread of their own (the same thread for all, so that what
the factory opens, a SQLite connection say, works in search), and each search has `timeout` seconds
(`--timeout`, default SEARCH_TIMEOUT): a search that takes longer fails the run, and the worker is left
behind (a daemon thread: the command exits without it).

Anything wrong fails the run with one line naming the question and the problem, and writes nothing: the
factory or a search raising (even SystemExit or KeyboardInterrupt), a search taking longer than the timeout,
a search returning something other than an iterable of pairs (None, a number, a str, a dict), a result that
is not a (doc_id, score) pair, an unknown doc id, a doc given twice, a score that is not a finite number
(NaN, infinity, or an int too large for a float).
"""

from __future__ import annotations

import importlib
import json
import math
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from retrieval_metrics.retrievers import Document
from retrieval_metrics.warehouse import InputError


class Retriever(Protocol):
    def search(self, question: str, k: int) -> Iterable[tuple[str, float]]: ...


RetrieverFactory = Callable[..., Retriever]
T = TypeVar("T")

SEARCH_TIMEOUT = 30.0  # seconds a plug-in's search may take, unless --timeout says otherwise


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


def load_factory(spec: str, kind: str = "retriever") -> RetrieverFactory:
    """The callable named by `package.module:name`, importable from the working directory or PYTHONPATH; `kind`
    (retriever, judge) is what the one-line errors call it."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise InputError(f"{kind} {spec!r} is not package.module:name")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # as `python -m` does: a module beside you is importable
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(f"{kind} {spec!r}: cannot import {module_name!r} ({exc}); is it on PYTHONPATH?") from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's module failed while importing: say how
        raise InputError(f"{kind} {spec!r}: importing {module_name!r} raised {described(exc)}") from None
    factory = module
    for part in attribute.split("."):
        if not hasattr(factory, part):
            raise InputError(f"{kind} {spec!r}: {module_name!r} has no {attribute!r}")
        factory = getattr(factory, part)
    if not callable(factory):
        raise InputError(f"{kind} {spec!r}: {attribute!r} is not callable (a class or a function)")
    return factory  # type: ignore[return-value]


def described(exc: BaseException) -> str:
    """An exception in one line: its type and the first line of its message."""
    message = (str(exc).splitlines() or [""])[0]
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def briefly(value: object, width: int = 60) -> str:
    """repr(value), cut to `width` characters; the type's name if its repr fails."""
    try:
        return repr(value)[:width]
    except Exception:  # noqa: BLE001 - a plug-in's object with a broken __repr__, or an int too long to print
        return f"<{type(value).__name__}>"


def a(noun: str) -> str:
    """The noun with its indefinite article: a dict, an int."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def check_timeout(timeout: float) -> float:
    """The seconds a search may take: a positive finite number (InputError otherwise)."""
    if not (math.isfinite(timeout) and timeout > 0):
        raise InputError(f"--timeout must be a positive number of seconds, not {timeout:g}")
    return timeout


class PluginRaised(Exception):
    """What the plug-in's code raised on the worker (any BaseException, SystemExit included)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(described(error))
        self.error = error


class Worker:
    """One daemon thread that runs the plug-in's code, so that the command can stop waiting for it: a call that
    has not returned within its timeout is left running, and the process exits without it."""

    def __init__(self) -> None:
        self.calls: queue.SimpleQueue[Callable[[], object] | None] = queue.SimpleQueue()
        self.outcomes: queue.SimpleQueue[tuple[bool, object]] = queue.SimpleQueue()
        threading.Thread(target=self.serve, name="retrieval-metrics plug-in", daemon=True).start()

    def serve(self) -> None:
        while (call := self.calls.get()) is not None:
            try:
                self.outcomes.put((True, call()))
            except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt too: the plug-in's failure
                self.outcomes.put((False, exc))

    def run(self, call: Callable[[], T], timeout: float | None = None) -> T:
        """call() on the worker: what it returned; PluginRaised if it raised, TimeoutError if it has not returned
        within `timeout` seconds (None: no limit). Ctrl-C while waiting is this thread's KeyboardInterrupt."""
        self.calls.put(call)
        try:
            done, value = self.outcomes.get(timeout=None if timeout is None else min(timeout, threading.TIMEOUT_MAX))
        except queue.Empty:
            raise TimeoutError from None
        if not done:
            assert isinstance(value, BaseException)
            raise PluginRaised(value)
        return value  # type: ignore[return-value]

    def close(self) -> None:
        """Let the thread end once it is idle (at once, unless a call timed out)."""
        self.calls.put(None)


def listed(returned: object) -> list[object] | None:
    """What a search returned, as a list; None if it is not an iterable of pairs (None, a number, a str, a
    dict: whose iteration gives its keys)."""
    if returned is None or isinstance(returned, (str, bytes, Mapping)):
        return None
    try:
        items = iter(returned)  # type: ignore[call-overload]
    except TypeError:
        return None
    return list(items)


def version_of(retriever: object, factory: object) -> str | None:
    """The retriever's (or judge's) `version` attribute, else its top-level package's `__version__`, else None."""
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
    """A score as a float: TypeError if it is not a number, OverflowError if no float holds it (an int of 400
    digits, say)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise TypeError
    return float(value)  # type: ignore[arg-type]


def checked_pair(question_id: str, position: int, result: object) -> tuple[str, float]:
    """A search's result as (doc_id, score); InputError naming the question unless it is a pair of a str and a
    finite number."""
    try:
        doc_id, score = result  # type: ignore[misc]
        if not isinstance(doc_id, str):
            raise TypeError
        value = score_of(score)
    except OverflowError:
        raise InputError(
            f"question {question_id!r}: doc {doc_id!r} has a non-finite score "
            f"({a(type(score).__name__)} beyond a float's range)"
        ) from None
    except Exception:  # noqa: BLE001 - not a pair, or a score whose __float__ fails
        raise InputError(
            f"question {question_id!r}: result {position} ({briefly(result)}) is not a (doc_id: str, score) pair"
        ) from None
    if not math.isfinite(value):
        raise InputError(f"question {question_id!r}: doc {doc_id!r} has a non-finite score ({value})")
    return doc_id, value


def run_plugin(
    spec: str,
    params: Mapping[str, object],
    documents: Sequence[Document],
    questions: Sequence[tuple[str, str]],
    k: int,
    advance: Callable[[int], object] = lambda _: None,
    timeout: float = SEARCH_TIMEOUT,
) -> PluginRun:
    """Build the plug-in once and search every question, each search within `timeout` seconds, on a worker
    thread; InputError naming the question on any bad output."""
    check_timeout(timeout)
    factory = load_factory(spec)
    worker = Worker()
    try:
        try:
            retriever = worker.run(lambda: factory(list(documents), **params))
        except PluginRaised as raised:  # the user's code: one line, nothing written
            raise InputError(f"retriever {spec!r} could not be built: {raised}") from None
        if not callable(getattr(retriever, "search", None)):
            raise InputError(f"retriever {spec!r}: what it built has no search(question, k) method")
        run = search_all(worker, retriever, questions, k, advance, timeout)
    finally:
        worker.close()
    parameters: dict[str, object] = {"plugin": spec, "params": dict(params)}
    version = version_of(retriever, factory)
    if version is not None:
        parameters["version"] = version
    return PluginRun(*run, parameters)


def search_all(
    worker: Worker,
    retriever: Retriever,
    questions: Sequence[tuple[str, str]],
    k: int,
    advance: Callable[[int], object],
    timeout: float,
) -> tuple[list[str], list[str], list[float], dict[str, float]]:
    """Every question's search on the worker, checked: question ids, doc ids, scores and latencies (ms)."""
    question_ids: list[str] = []
    doc_ids: list[str] = []
    scores: list[float] = []
    latencies: dict[str, float] = {}
    for question_id, text in questions:

        def search(text: str = text) -> tuple[object, list[object] | None, float]:
            started = time.perf_counter()
            returned = retriever.search(text, k)
            results = listed(returned)
            return returned, results, (time.perf_counter() - started) * 1000.0

        try:
            returned, results, latency_ms = worker.run(search, timeout)
        except PluginRaised as raised:
            raise InputError(f"question {question_id!r}: the retriever raised {raised}") from None
        except TimeoutError:
            raise InputError(
                f"question {question_id!r}: the search took longer than the timeout, {timeout:g} s (--timeout)"
            ) from None
        if results is None:
            what = "None" if returned is None else a(type(returned).__name__)
            raise InputError(
                f"question {question_id!r}: the retriever returned {what}, not a list of (doc_id, score) pairs"
            )
        latencies[question_id] = latency_ms
        for position, result in enumerate(results, 1):
            doc_id, value = checked_pair(question_id, position, result)
            question_ids.append(question_id)
            doc_ids.append(doc_id)
            scores.append(value)
        advance(1)
    return question_ids, doc_ids, scores, latencies
