"""Your own relevance judge as a plug-in: `retrieval-metrics judge --collection C --judge package.module:name`.

The protocol (docs/judging.md has a complete example, docs/examples/overlap_judge.py):

    factory(**params) -> judge                 # built once
    judge.judge(item: JudgeItem) -> grade       # asked once per (question, document) to judge

`name` is a class or any callable; `params` are the `--param key=value` pairs (a value that reads as JSON is
that JSON value, else a string). An item holds the question's id and text and the document's id, title and
full text (None where the collection has none). The judge returns an int grade, a (grade, rationale) pair, or
a mapping with `grade` and optionally `rationale` (other keys are ignored); a rationale is a str or None. An
optional `version` attribute of the judge (or `__version__` of its top-level package) is recorded.

What is judged (`--pairs`): `queue`, the collection's judging_queue as the last build left it (after `pool`),
in (question, queue position) order; or `judged`, every (question, document) that already has a base grade
(raw.qrels) or a person's (a label file's version), by question and doc id, to measure how well the judge
agrees with people. `--limit N` judges the first N only.

The judgments become the collection's next qrels version in one transaction, as a label file's do
(retrieval_metrics.judgments): rows in raw.judgments with judge_kind 'automatic', judge the spec as given, the
rationale and the judge call's wall time (latency_ms); a row in raw.judgment_versions with the judge's version
and parameters (JSON, keys sorted). For a pair, people's grades (a label file's, else the base qrels') supersede
any automatic one (int_qrels_unioned). The judge runs with the warehouse closed: only reading the items and
writing the version hold it.

The factory and every judge call run on one worker thread of their own (plugins.Worker: the same thread for all),
and each judge call has `timeout` seconds (`--timeout`, default plugins.SEARCH_TIMEOUT); building the judge has
no limit. Anything wrong fails the command with one line naming the judge and the item, and writes nothing: the
factory or a judge call raising (even SystemExit or KeyboardInterrupt), a call taking longer than the timeout, a
judge call returning something that is not a grade (None, a str, a float, a bool, a tuple that is not a pair, a
mapping without grade, a grade outside the 32-bit range of grades, a rationale that is not a str).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral
from pathlib import Path
from typing import Protocol

import duckdb

from retrieval_metrics.judgments import changes
from retrieval_metrics.plugins import (
    SEARCH_TIMEOUT,
    PluginRaised,
    Worker,
    a,
    briefly,
    check_timeout,
    load_factory,
    version_of,
)
from retrieval_metrics.progress import progress
from retrieval_metrics.raw_tables import check_judged
from retrieval_metrics.warehouse import PROG, SEEDED_COLLECTION, InputError, check_identifier, connect, transaction

AUTOMATIC = "automatic"  # judge_kind of a judge plug-in's judgments: below people's grades in int_qrels_unioned
PAIRS = ("queue", "judged")
JUDGE_TIMEOUT = SEARCH_TIMEOUT  # seconds a judge call may take, unless --timeout says otherwise
SHAPES = "an int, a (grade, rationale) pair or a mapping with grade"


@dataclass(frozen=True)
class JudgeItem:
    """One (question, document) to judge: ids, the question's text, the document's title and full text (None
    where the collection has none)."""

    question_id: str
    question_text: str | None
    doc_id: str
    doc_title: str | None
    doc_text: str | None


class Judge(Protocol):
    def judge(self, item: JudgeItem) -> object: ...


@dataclass(frozen=True)
class JudgeRequest:
    """One `judge` command: the collection, the judge's spec and parameters, which pairs, how many, how long each
    call may take."""

    collection_id: str
    spec: str
    params: Mapping[str, object]
    pairs: str = "queue"
    limit: int | None = None
    timeout: float = JUDGE_TIMEOUT

    def check(self) -> None:
        check_identifier("collection", self.collection_id)
        if self.collection_id == SEEDED_COLLECTION:
            raise InputError(f"collection {SEEDED_COLLECTION!r} is the lesson's seeds: its judgments live in seeds/")
        if ":" not in self.spec:
            raise InputError(f"judge {self.spec!r} is not package.module:name")
        if self.pairs not in PAIRS:
            raise InputError(f"--pairs {self.pairs!r}: one of {', '.join(PAIRS)}")
        if self.limit is not None and self.limit < 1:
            raise InputError(f"--limit {self.limit}: judge at least 1 item, e.g. --limit 100")
        check_timeout(self.timeout)
        try:
            params_json(self.params)
        except (TypeError, ValueError) as exc:
            raise InputError(f"--param: cannot be recorded as JSON ({exc})") from None


@dataclass(frozen=True)
class AutomaticJudgment:
    """One judge call's result: the pair, its grade and rationale, and the call's wall time."""

    question_id: str
    doc_id: str
    grade: int
    rationale: str | None
    latency_ms: float


def params_json(params: Mapping[str, object]) -> str:
    """The parameters as raw.judgment_versions keeps them: JSON, keys sorted."""
    return json.dumps(dict(params), sort_keys=True, ensure_ascii=False, allow_nan=False)


def judge_collection(database: Path, request: JudgeRequest) -> str:
    """Judge the request's items with the plug-in and append the judgments as the collection's next qrels version,
    in one transaction; one line saying which version, how many judgments, what they changed and how long the
    calls took. InputError, and nothing written, for a bad request or a judge that goes wrong."""
    request.check()
    if not database.exists():
        raise InputError(f"{database} does not exist: import the collection's qrels first")
    with connect(database) as con, transaction(con):  # the raw tables an older warehouse lacks, created
        check_judged(con, request.collection_id)
        items = read_items(con, request)
    # judged with the warehouse closed: a judge may take hours (an LLM), and other writers must not wait for it
    factory = load_factory(request.spec, "judge")
    judge, judgments = run_judge(request, factory, items)
    with connect(database) as con, transaction(con):
        (version,) = con.execute("select coalesce(max(qrels_version), 0) + 1 from raw.judgments "
                                 "where collection_id = ?", [request.collection_id]).fetchone()  # fmt: skip
        new, changed = changes(con, request.collection_id, judgments, AUTOMATIC)
        judge_version = version_of(judge, factory)
        con.execute(
            "insert into raw.judgments (collection_id, qrels_version, question_id, doc_id, grade, judge, judge_kind, "
            "note, rationale, latency_ms) select ?, ?, unnest(?::varchar[]), unnest(?::varchar[]), "
            "unnest(?::integer[]), ?, ?, null, unnest(?::varchar[]), unnest(?::double[])",
            [request.collection_id, version, [j.question_id for j in judgments], [j.doc_id for j in judgments],
             [j.grade for j in judgments], request.spec, AUTOMATIC, [j.rationale for j in judgments],
             [j.latency_ms for j in judgments]],
        )  # fmt: skip
        con.execute(
            "insert into raw.judgment_versions (collection_id, qrels_version, created_at, judge, judge_kind, source, "
            "n_judgments, n_new, n_changed, judge_version, judge_params) values (?, ?, "
            "cast(now() at time zone 'UTC' as timestamp), ?, ?, ?, ?, ?, ?, ?, ?)",
            [request.collection_id, version, request.spec, AUTOMATIC, request.spec, len(judgments), new, changed,
             judge_version, params_json(request.params)],
        )  # fmt: skip
    latencies = [j.latency_ms for j in judgments]
    named = request.spec + (f" (version {judge_version})" if judge_version is not None else "")
    mean, slowest = sum(latencies) / len(latencies), max(latencies)
    return (f"collection {request.collection_id}: qrels version {version} from judge {named}: {len(judgments)} "
            f"judgments of {request.pairs} pairs ({new} new, {changed} changed a grade); latency mean {mean:.3g} ms, "
            f"max {slowest:.3g} ms")  # fmt: skip


def read_items(con: duckdb.DuckDBPyConnection, request: JudgeRequest) -> list[JudgeItem]:
    """The items to judge, in order (--pairs, --limit): with the question's text and the document's title and
    full text from the collection's raw tables. InputError if there are none."""
    c = request.collection_id
    if request.pairs == "queue":
        ((queued,),) = con.execute(
            "select count(*) from information_schema.tables where table_catalog = current_database() "
            "and table_schema = 'main' and table_name = 'judging_queue'").fetchall()  # fmt: skip
        if not queued:
            raise InputError(f"the warehouse has no judging_queue yet: run `{PROG} pool --collection {c} --all "
                             "--depth K` first (it builds the queue)")  # fmt: skip
        pairs = ("select question_id, doc_id, queue_position as position from main.judging_queue "
                 "where collection_id = $c")
        order = "pairs.question_id, pairs.position"
    else:
        pairs = ("select question_id, doc_id from raw.qrels where collection_id = $c union select question_id, "
                 "doc_id from raw.judgments where collection_id = $c and judge_kind = 'human'")
        order = "pairs.question_id, pairs.doc_id"
    rows = con.execute(
        f"""
        select pairs.question_id, questions.question_text, pairs.doc_id, documents.title, documents.doc_text
        from ({pairs}) as pairs
        left join raw.questions as questions
            on questions.collection_id = $c and questions.question_id = pairs.question_id
        left join raw.documents as documents
            on documents.collection_id = $c and documents.doc_id = pairs.doc_id
        order by {order}
        {'' if request.limit is None else 'limit $limit'}
        """,
        {"c": c, **({} if request.limit is None else {"limit": request.limit})},
    ).fetchall()
    if not rows:
        if request.pairs == "queue":
            raise InputError(f"collection {c!r} has nothing in judging_queue: run `{PROG} pool --collection {c} "
                             "--all --depth K` first (it builds the queue of unjudged pairs)")  # fmt: skip
        raise InputError(f"collection {c!r} has no judged pairs to judge")
    return [JudgeItem(*row) for row in rows]


def run_judge(
    request: JudgeRequest, factory: Callable[..., object], items: Sequence[JudgeItem]
) -> tuple[Judge, list[AutomaticJudgment]]:
    """Build the judge once and ask it about every item, each call within the timeout, on a worker thread; the
    judge and its checked judgments. InputError naming the judge and the item on anything wrong."""
    spec = request.spec
    worker = Worker()
    try:
        try:
            judge: Judge = worker.run(lambda: factory(**request.params))  # type: ignore[assignment]
        except PluginRaised as raised:
            raise InputError(f"judge {spec} could not be built: raised {raised}") from None
        if not callable(getattr(judge, "judge", None)):
            raise InputError(f"judge {spec}: what it built has no judge(item) method")
        judgments: list[AutomaticJudgment] = []
        with progress(total=len(items), desc="judge", unit="pair") as bar:
            try:
                for number, item in enumerate(items, 1):
                    judgments.append(judged(worker, judge, item, f"judge {spec} on {where(request, number, item)}",
                                            request.timeout))  # fmt: skip
                    bar.update(1)
            except InputError:
                bar.leave = False  # clear the bar: the one-line message follows
                raise
    finally:
        worker.close()
    return judge, judgments


def where(request: JudgeRequest, number: int, item: JudgeItem) -> str:
    """The item as the error lines name it: `queue item 3 (question q1, doc d7)`."""
    kind = "queue item" if request.pairs == "queue" else "judged pair"
    return f"{kind} {number} (question {item.question_id}, doc {item.doc_id})"


def judged(worker: Worker, judge: Judge, item: JudgeItem, what: str, timeout: float) -> AutomaticJudgment:
    """One judge call on the worker, timed and checked."""

    def call() -> tuple[object, float]:
        started = time.perf_counter()
        returned = judge.judge(item)
        return returned, (time.perf_counter() - started) * 1000.0

    try:
        returned, latency_ms = worker.run(call, timeout)
    except PluginRaised as raised:
        raise InputError(f"{what}: raised {raised}") from None
    except TimeoutError:
        raise InputError(f"{what}: took longer than the timeout, {timeout:g} s (--timeout)") from None
    try:
        grade, rationale = verdict(returned)
    except ValueError as problem:
        raise InputError(f"{what}: {problem}") from None
    return AutomaticJudgment(item.question_id, item.doc_id, grade, rationale, latency_ms)


def verdict(returned: object) -> tuple[int, str | None]:
    """What a judge call returned as (grade, rationale); ValueError saying what is wrong with it."""
    if isinstance(returned, Mapping):
        try:
            if "grade" not in returned:
                keys = ", ".join(briefly(key, 20) for key in list(returned)[:5])
                raise ValueError(f"returned a mapping without grade (its keys: {keys or 'none'})")
            grade, rationale = returned["grade"], returned.get("rationale")
        except ValueError:
            raise
        except Exception as exc:  # noqa: BLE001 - a mapping of the judge's whose lookups fail
            raise ValueError(f"returned a mapping whose grade cannot be read ({type(exc).__name__})") from None
    elif isinstance(returned, tuple | list):
        if len(returned) != 2:
            raise ValueError(f"returned {a(type(returned).__name__)} of {len(returned)} items, not a (grade, "
                             "rationale) pair")  # fmt: skip
        grade, rationale = returned
    elif isinstance(returned, Integral) and not isinstance(returned, bool):
        grade, rationale = returned, None
    else:
        what = "None" if returned is None else f"{a(type(returned).__name__)} ({briefly(returned)})"
        raise ValueError(f"returned {what}, not a grade: {SHAPES}")
    if isinstance(grade, bool) or not isinstance(grade, Integral):
        what = "None" if grade is None else f"{a(type(grade).__name__)} ({briefly(grade)})"
        raise ValueError(f"gave a grade that is {what}, not an int")
    if not -(2**31) <= int(grade) < 2**31:
        raise ValueError(f"gave grade {briefly(grade)}, out of the range of grades (32-bit integers)")
    if rationale is not None and not isinstance(rationale, str):
        raise ValueError(f"gave a rationale that is {a(type(rationale).__name__)} ({briefly(rationale)}), not a str")
    if rationale is not None and not rationale.isascii():
        try:
            rationale.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(f"gave a rationale that is not text ({exc.reason} at character {exc.start})") from None
    return int(grade), rationale
