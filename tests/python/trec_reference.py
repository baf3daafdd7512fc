"""The references, run on the same qrels and run as the warehouse, and the loops that compare them with it.

- trec_eval's own code (pytrec_eval) for every trec_eval measure, under trec_eval's options: the relevance
  level (-l), judged docs only (-J), and the averaging (-c or not);
- ir_measures 0.4.3 for Judged@k (its judged provider) and for ERR@k and nDCG(dcg='exp-log2')@k (its gdeval
  provider, the TREC Web track's gdeval.pl, which we run with full-precision output: `gdeval_script`).

`assert_matches_trec_eval` checks the wide tables question_metrics / run_metrics (default settings);
`assert_measures_match_references` the long tables question_measures / run_measures, every measure under any
`Settings`. Each has one comparison loop per table.

What the references do that one has to know (pinned in test_trec_agreement.py's fast tests):

- pytrec_eval ranks by score as a 32-bit float descending, ties by doc id descending; ir_measures' judged
  provider sorts by (-score, doc_id) as doubles and gdeval by score then doc id descending as doubles. So
  ir_measures gets the warehouse's ranking (raw.rankings, checked equal to trec_eval's order) as scores -rank.
- pytrec_eval evaluates the questions in both qrels and run, also one whose ranking -J leaves empty: its
  iprec_at_recall starts from num_rel_ret / num_ret = 0 / 0, so the recall levels needing no relevant doc
  (0.00; all of them when num_rel = 0) and 11pt_avg are NaN there: taken as 0, the value on an empty ranking.
  It must never be handed an empty ranking (a question with {} as run gets num_rel 0 even with relevant
  docs), so the values on an empty ranking are computed here.
- iprec_at_recall: this pytrec_eval bundles trec_eval v9's cutoff (long)(recall * num_rel + 0.9) relevant docs
  (trec_eval's current source uses lround). 0.7 * 3 + 0.9 < 3 as doubles: 2 docs.
- Negative grades: judged and not relevant for trec_eval, but -J drops them like unjudged docs and bpref does
  not count them as judged non-relevant. ndcg / ndcg_cut ignore the relevance level: every grade > 0 gains.
- gdeval needs numeric topic ids (it strips up to the last '-'), refuses grades above its $MAX_JUDGMENT (4),
  prints only topics with a grade > 0 that the run retrieved, 5 decimals, and ignores the relevance level.
  Judged@k counts a doc with any qrels entry (negative grades too) as judged and divides by min(k, docs
  retrieved). ir_measures gives every other qrels question (not retrieved; for gdeval also nothing > 0) 0.
  Neither knows -J: under judged_docs_only both get the run without the unjudged docs (no grade >= 0).
"""

from __future__ import annotations

import json
import math
import pkgutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import SimpleNamespace
from unittest import mock

import duckdb
import ir_measures
import ir_measures.providers.gdeval_provider as gdeval_provider
import numpy as np
import pytest
import pytrec_eval

# our question_metrics column -> trec_eval measure (k-dependent ones take the cutoff as suffix)
AT_K = {"precision": "P", "recall": "recall", "ndcg": "ndcg_cut", "hit": "success"}
WHOLE_RANKING = {"reciprocal_rank": "recip_rank", "average_precision": "map", "r_precision": "Rprec"}
MEASURES = [*AT_K, *WHOLE_RANKING]
# the same measures' means in run_metrics, in MEASURES order
RUN_COLUMNS = ["precision", "recall", "ndcg", "hit_rate", "mrr", "mean_average_precision", "r_precision"]

Qrels = dict[str, dict[str, int]]
TrecRun = dict[str, dict[str, float]]


def trec_eval_per_question(qrels: Qrels, run: TrecRun, ks: list[int]) -> dict[str, dict[str, float]]:
    """pytrec_eval's per-question values, renamed to our columns with the cutoff: {'q': {'ndcg@2': ...}}."""
    cutoffs = ",".join(str(k) for k in ks)
    measures = {f"{name}.{cutoffs}" for name in AT_K.values()} | set(WHOLE_RANKING.values())
    evaluated = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    renamed: dict[str, dict[str, float]] = {}
    for question_id, values in evaluated.items():
        row = {f"{ours}@{k}": values[f"{theirs}_{k}"] for ours, theirs in AT_K.items() for k in ks}
        row.update({ours: values[theirs] for ours, theirs in WHOLE_RANKING.items()})
        renamed[question_id] = row
    return renamed


def key(measure: str, k: int) -> str:
    return f"{measure}@{k}" if measure in AT_K else measure


def assert_matches_trec_eval(
    con: duckdb.DuckDBPyConnection,
    collection_id: str,
    run_id: str,
    qrels: Qrels,
    run: TrecRun,
    ks: list[int],
    averaging: str = "all_questions",
    tolerance: float = 1e-9,
) -> int:
    """Every per-question value and every mean of one run equals pytrec_eval's on (qrels, run); returns how
    many values were compared.

    trec_eval evaluates only the questions in both the qrels and the run; any other question of ours must
    score 0 (trec_eval -c). The means are over the questions question_metrics marks is_averaged: all of them
    (all_questions, trec_eval -c) or exactly those trec_eval evaluated (retrieved_only, its default).
    """
    reference = trec_eval_per_question(qrels, run, ks)
    rows = con.execute(
        f"select question_id, k, is_averaged, {', '.join(MEASURES)} from question_metrics "
        "where collection_id = ? and run_id = ?",
        [collection_id, run_id],
    ).fetchall()
    assert rows, (collection_id, run_id)
    checked = 0
    for question_id, k, is_averaged, *values in rows:
        assert is_averaged == (averaging == "all_questions" or question_id in reference), question_id
        for measure, value in zip(MEASURES, values, strict=True):
            expected = reference.get(question_id, {}).get(key(measure, k), 0.0)
            assert value == pytest.approx(expected, abs=tolerance), (collection_id, run_id, question_id, key(measure, k))
            checked += 1
    averaged = {question_id for question_id, _, is_averaged, *_ in rows if is_averaged}
    if averaging == "retrieved_only":
        assert averaged == set(reference)
    means = con.execute(
        f"select k, n_questions, {', '.join(RUN_COLUMNS)} from run_metrics "
        "where collection_id = ? and run_id = ? order by k",
        [collection_id, run_id],
    ).fetchall()
    assert [row[0] for row in means] == sorted(ks)
    for k, n_questions, *values in means:
        assert n_questions == len(averaged)
        for measure, value in zip(MEASURES, values, strict=True):
            total = sum(reference[q][key(measure, k)] for q in averaged if q in reference)
            assert value == pytest.approx(total / len(averaged), abs=tolerance), (collection_id, run_id, key(measure, k))
            checked += 1
    return checked


def warehouse_inputs(con: duckdb.DuckDBPyConnection, collection_id: str, run_id: str) -> tuple[Qrels, TrecRun]:
    """The collection's seeded qrels and the run, as pytrec_eval dicts. The score handed to trec_eval is -rank,
    so trec_eval's own ordering (score descending) is exactly the warehouse's rank."""
    qrels: Qrels = {}
    for question_id, doc_id, relevance in con.execute(
        "select question_id, doc_id, relevance from staging.stg_seeds__golden_qrels where collection_id = ?",
        [collection_id],
    ).fetchall():
        qrels.setdefault(question_id, {})[doc_id] = relevance
    run: TrecRun = {}
    for question_id, doc_id, rank in con.execute(
        "select question_id, doc_id, rank from raw.rankings where collection_id = ? and run_id = ?",
        [collection_id, run_id],
    ).fetchall():
        run.setdefault(question_id, {})[doc_id] = -float(rank)
    return qrels, run


# ---------------------------------------------------------------------------------------------------------------
# The long tables: question_measures and run_measures, every measure under any settings.

IPREC_AT_RECALL = [f"iprec_at_recall_{level / 10:.2f}" for level in range(11)]
# trec_eval's printed names: measures of the whole ranking (k is null) ...
# precision at the multiples 0.2 .. 2.0 of R (pytrec_eval's family Rprec_mult)
RPREC_MULT = [f"Rprec_mult_{tenths / 10:.2f}" for tenths in range(2, 21, 2)]
TREC_WHOLE_RANKING = [
    "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank", *IPREC_AT_RECALL,
    "infAP", "gm_bpref", *RPREC_MULT, "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "set_P",
    "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret",
]  # fmt: skip
# trec_eval 10.0's rank-biased precision and its residual, which pytrec_eval's trec_eval lacks: trec_eval_rbp
TREC_RBP = ["rbp", "rbp_resid"]
# ... and at a cutoff k, printed as P_5
TREC_AT_K = ["P", "recall", "success", "ndcg_cut", "map_cut", "relative_P"]
# trec_eval 10.0's share of unjudged docs at k, which pytrec_eval's trec_eval lacks: trec_eval_unj
TREC_UNJ = "unj"
# ir_measures' measures at a cutoff, named str(measure): Judged@5, ERR@5, nDCG(dcg='exp-log2')@5
JUDGED, ERR, EXP_NDCG, RR = "Judged", "ERR", "nDCG(dcg='exp-log2')", "RR"
IR_MEASURES_AT_K = [JUDGED, ERR, EXP_NDCG, RR]
SUMMED = {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}  # trec_eval's `all` line sums these
GEOMETRIC = {"gm_map", "gm_bpref"}  # exp of the mean of the per-question logs
MIN_GEO_MEAN = 1e-5  # trec_eval's floor under a question's AP in gm_map
GDEVAL_MAX_JUDGMENT = 4
PRINTED_PRECISION = 5e-6 + 1e-12  # gdeval prints 5 decimals: half a unit of the last one, and a float's breath


@dataclass(frozen=True)
class Settings:
    """The settings that change the numbers (a collection's own, or the dbt vars), with dbt_project.yml's defaults."""

    relevance_level: int = 1  # trec_eval -l
    judged_docs_only: bool = False  # trec_eval -J
    averaging: str = "all_questions"  # all_questions (trec_eval -c) or retrieved_only (its default)
    err_max_grade: int = GDEVAL_MAX_JUDGMENT  # gdeval's $MAX_JUDGMENT
    ignore_identical_ids: bool = False  # BEIR's: the question's own id dropped from its ranking
    rbp_persistence: float = 0.9  # trec_eval 10.0's rbp.p
    max_docs_per_question: int | None = None  # trec_eval -M: each ranking's top N only

    def collection_settings(self, ks: list[int]) -> list[str]:
        """`retrieval-metrics settings` arguments giving a collection these settings and cutoffs."""
        values = {
            "k_values": ",".join(map(str, ks)), "averaging": self.averaging, "relevance_level": self.relevance_level,
            "judged_docs_only": str(self.judged_docs_only).lower(), "err_max_grade": self.err_max_grade,
            "ignore_identical_ids": str(self.ignore_identical_ids).lower(), "trec_eval_version": 9,
            "rbp_persistence": self.rbp_persistence,
            "max_docs_per_question": "none" if self.max_docs_per_question is None else self.max_docs_per_question,
        }  # fmt: skip
        return [argument for name, value in values.items() for argument in ("--set", f"{name}={value}")]

    def evaluation_settings(self, ks: list[int]) -> dict[str, object]:
        """What run_measures.evaluation_settings records of these settings, as JSON."""
        return {
            "averaging": self.averaging, "err_max_grade": self.err_max_grade,
            "ignore_identical_ids": self.ignore_identical_ids,
            "judged_docs_only": self.judged_docs_only, "k_values": ks,
            "max_docs_per_question": self.max_docs_per_question, "preset": None, "qrels_version": 0,
            "rbp_persistence": self.rbp_persistence, "relevance_level": self.relevance_level,
            "trec_eval_version": 9,
        }  # fmt: skip

    @property
    def label(self) -> str:
        judged = "judged_docs_only" if self.judged_docs_only else "all_docs"
        err = "" if self.err_max_grade == GDEVAL_MAX_JUDGMENT else f"-err_max_grade{self.err_max_grade}"
        identical = "-ignore_identical_ids" if self.ignore_identical_ids else ""
        rbp = "" if self.rbp_persistence == 0.9 else f"-rbp{self.rbp_persistence}"
        most = "" if self.max_docs_per_question is None else f"-M{self.max_docs_per_question}"
        return f"level{self.relevance_level}-{judged}-{self.averaging}{err}{identical}{rbp}{most}"

    @property
    def is_default(self) -> bool:
        """The settings the wide tables' check (assert_matches_trec_eval) assumes: level 1, no -J, every id kept."""
        return (self.relevance_level == 1 and not self.judged_docs_only and not self.ignore_identical_ids
                and self.max_docs_per_question is None)


def measure_names(ks: list[int]) -> dict[str, int | None]:
    """Every measure_name question_measures has per question, with its k (None: no cutoff)."""
    names: dict[str, int | None] = dict.fromkeys(TREC_WHOLE_RANKING + TREC_RBP)
    names.update({f"{measure}_{k}": k for measure in [*TREC_AT_K, TREC_UNJ] for k in ks})
    names.update({f"{measure}@{k}": k for measure in IR_MEASURES_AT_K for k in ks})
    return names


def measure_of(measure_name: str, k: int | None) -> str:
    """The name without its cutoff (the `measure` column): P for P_5, Judged for Judged@5."""
    if k is None:
        return measure_name
    for separator in ("@", "_"):
        if measure_name.endswith(f"{separator}{k}"):
            return measure_name[: -len(f"{separator}{k}")]
    raise AssertionError(measure_name)


def aggregation(measure_name: str) -> str:
    """How run_measures aggregates a measure over the averaged questions, as trec_eval's `all` line does."""
    if measure_name in SUMMED:
        return "sum"
    return "geometric_mean" if measure_name in GEOMETRIC else "mean"


def trec_order(run: TrecRun) -> dict[str, list[str]]:
    """Each question's ranking as trec_eval orders it: score as a 32-bit float descending, ties by doc id
    descending (byte order)."""
    return {
        question_id: sorted(scores, key=lambda doc_id: (np.float32(scores[doc_id]), doc_id.encode()), reverse=True)
        for question_id, scores in run.items()
    }


def warehouse_rankings(con: duckdb.DuckDBPyConnection, collection_id: str, run_id: str) -> dict[str, list[str]]:
    """raw.rankings of one run: each question's doc ids by rank."""
    rankings: dict[str, list[str]] = {}
    for question_id, doc_id in con.execute(
        "select question_id, doc_id from raw.rankings where collection_id = ? and run_id = ? "
        "order by question_id, rank",
        [collection_id, run_id],
    ).fetchall():
        rankings.setdefault(question_id, []).append(doc_id)
    return rankings


def judged_only(qrels: Qrels, rankings: dict[str, list[str]]) -> dict[str, list[str]]:
    """trec_eval -J's condensed rankings: only docs with a grade >= 0 (negative grades count as unjudged)."""
    return {
        question_id: [doc_id for doc_id in docs if qrels.get(question_id, {}).get(doc_id, -1) >= 0]
        for question_id, docs in rankings.items()
    }


def trec_eval_reference(qrels: Qrels, run: TrecRun, ks: list[int], settings: Settings) -> dict[str, dict[str, float]]:
    """pytrec_eval's values of every trec_eval measure, for the questions it evaluates (in qrels and run)."""
    cutoffs = ",".join(str(k) for k in ks)
    measures = {name for name in TREC_WHOLE_RANKING if name not in IPREC_AT_RECALL + RPREC_MULT}
    measures |= {"iprec_at_recall", "Rprec_mult"} | {f"{measure}.{cutoffs}" for measure in TREC_AT_K}
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, measures, relevance_level=settings.relevance_level, judged_docs_only_flag=settings.judged_docs_only
    )
    evaluated = evaluator.evaluate({question_id: docs for question_id, docs in run.items() if docs})
    names = [
        name for name, k in measure_names(ks).items()
        if (k is None or "@" not in name) and name not in TREC_RBP and measure_of(name, k) != TREC_UNJ
    ]  # fmt: skip
    for question_id, values in evaluated.items():
        assert set(names) <= set(values), (question_id, set(names) - set(values))
        undefined = {name for name in names if not math.isfinite(values[name])}
        if undefined and values["num_ret"] == 0:
            # -J left nothing: trec_eval's iprec_at_recall starts from num_rel_ret / num_ret = 0 / 0 (NaN), and
            # 11pt_avg averages those. The value on an empty ranking is 0.
            assert undefined <= {*IPREC_AT_RECALL, "11pt_avg"}, (question_id, values)
            values.update(dict.fromkeys(undefined, 0.0))
        assert not undefined or values["num_ret"] == 0, (question_id, values)
    return evaluated


def trec_eval_rbp(judgments: dict[str, int], ranking: list[str], p: float) -> dict[str, float]:
    """trec_eval 10.0's rbp and rbp_resid of one question (m_rbp.c, m_rbp_resid.c), step for step. The gains are
    the grades 0 .. the question's highest judged grade, scaled into [0, 1] when that is above 1 (m_rbp.c leaves
    its min and max uninitialized: set here as they must start, which the trec_eval 10.0 built from that source
    agrees with); any other grade (negative, or a doc not in the qrels) gains 0. The residual counts the
    retrieved docs without a grade >= 0 and the mass below the ranking, p^num_ret, and is 0 when every retrieved
    doc has a grade >= 0."""
    max_level = max((grade for grade in judgments.values() if grade >= 0), default=0)
    gains = {level: float(level) for level in range(max_level + 1)}
    low, high = min(gains.values()), max(gains.values())
    if low < 0 or high > 1:
        gains = {level: (gain - low) / (high - low) for level, gain in gains.items()}
    gained, unjudged, unjudged_mass, cur_p = 0.0, 0, 0.0, 1.0
    for doc_id in ranking:
        grade = judgments.get(doc_id, -1)  # RELVALUE_NONPOOL
        gain = gains.get(grade, 0.0)
        if gain != 0:
            gained += gain * cur_p
        if grade < 0:
            unjudged += 1
            unjudged_mass += cur_p
        cur_p *= p
    return {"rbp": (1.0 - p) * gained, "rbp_resid": cur_p + (1 - p) * unjudged_mass if unjudged else 0.0}


def trec_eval_unj(judgments: dict[str, int], ranking: list[str], ks: list[int]) -> dict[str, float]:
    """trec_eval 10.0's unj_k of one question (m_unjudged.c): the share of the top k without a grade >= 0 (not in
    the qrels, or judged negative), ranks past the ranking counting as judged."""
    return {
        f"{TREC_UNJ}_{k}": sum(judgments.get(doc_id, -1) < 0 for doc_id in ranking[:k]) / k for k in ks
    }


def empty_ranking_values(judgments: dict[str, int], ks: list[int], settings: Settings) -> dict[str, float]:
    """Every measure on an empty ranking (trec_eval -c's value for a question the run does not have): 0, but
    gm_map = log(1e-5) and num_rel = the question's relevant docs."""
    values = dict.fromkeys(measure_names(ks), 0.0)
    values.update(dict.fromkeys(GEOMETRIC, math.log(MIN_GEO_MEAN)))
    values["num_rel"] = float(sum(grade >= settings.relevance_level for grade in judgments.values()))
    return values


@contextmanager
def gdeval_script(full_precision: bool = True, max_grade: int = GDEVAL_MAX_JUDGMENT) -> Iterator[None]:
    """ir_measures' gdeval with full-precision output: inside, its gdeval provider runs its own bin/gdeval.pl
    with the two `%.5f` of its printf as `%.17g` (doubles printed exactly), and with $MAX_JUDGMENT = max_grade
    (ERR's maximum grade). full_precision=False keeps the printed 5 decimals."""
    original = pkgutil.get_data("ir_measures", "bin/gdeval.pl")
    assert original is not None
    script = original
    if full_precision:
        assert script.count(b"%.5f") == 2, "gdeval.pl's printf changed"
        script = script.replace(b"%.5f", b"%.17g")
    if max_grade != GDEVAL_MAX_JUDGMENT:
        line = b"$MAX_JUDGMENT = %d;" % GDEVAL_MAX_JUDGMENT
        assert script.count(line) == 1, "gdeval.pl's $MAX_JUDGMENT changed"
        script = script.replace(line, b"$MAX_JUDGMENT = %d;" % max_grade)

    def get_data(package: str, resource: str) -> bytes | None:
        if (package, resource) == ("ir_measures", "bin/gdeval.pl"):
            return script
        return pkgutil.get_data(package, resource)

    with mock.patch.object(gdeval_provider, "pkgutil", SimpleNamespace(get_data=get_data)):
        yield


def ir_measures_reference(
    qrels: Qrels, rankings: dict[str, list[str]], ks: list[int], settings: Settings, full_precision: bool = True
) -> dict[str, dict[str, float]]:
    """ir_measures' Judged@k (judged provider), RR@k (msmarco provider, at the relevance level), ERR@k and
    nDCG(dcg='exp-log2')@k (gdeval) of the rankings, for the questions they give a value for. Scores are -rank, so their order is the ranking's; under -J they get
    the condensed rankings; gdeval gets the question ids as integers 1..n."""
    if settings.judged_docs_only:
        rankings = judged_only(qrels, rankings)
    run = {
        question_id: {doc_id: -float(rank) for rank, doc_id in enumerate(docs, start=1)}
        for question_id, docs in rankings.items()
        if docs  # the judged provider divides by the ranking's length
    }
    values: dict[str, dict[str, float]] = {}
    judged = [ir_measures.parse_measure(f"{JUDGED}@{k}") for k in ks]
    for metric in ir_measures.judged.iter_calc(judged, qrels, run):
        values.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
    reciprocal = {ir_measures.parse_measure(f"{RR}(rel={settings.relevance_level})@{k}"): f"{RR}@{k}" for k in ks}
    for metric in ir_measures.msmarco.iter_calc(list(reciprocal), qrels, run):
        values.setdefault(metric.query_id, {})[reciprocal[metric.measure]] = metric.value
    number = {question_id: str(n) for n, question_id in enumerate(sorted(set(qrels) | set(run)), start=1)}
    question = {n: question_id for question_id, n in number.items()}
    gdeval = [ir_measures.parse_measure(f"{measure}@{k}") for measure in (ERR, EXP_NDCG) for k in ks]
    with gdeval_script(full_precision, settings.err_max_grade):
        for metric in ir_measures.gdeval.iter_calc(
            gdeval,
            {number[question_id]: judgments for question_id, judgments in qrels.items()},
            {number[question_id]: scores for question_id, scores in run.items()},
        ):
            values.setdefault(question[metric.query_id], {})[str(metric.measure)] = metric.value
    return values


@dataclass
class References:
    """Every measure's reference value per question of the collection, and which questions are averaged."""

    values: dict[str, dict[str, float]]  # question -> measure_name -> value
    printed: dict[str, dict[str, float]]  # question -> gdeval's measures as gdeval prints them (5 decimals)
    averaged: set[str]  # the questions the means are over
    names: dict[str, int | None]  # measure_name -> k

    def aggregate(self, measure_name: str) -> float:
        """The run's value: pytrec_eval's aggregation (sum for num_*, exp(mean of logs) for gm_*, else mean)."""
        return pytrec_eval.compute_aggregated_measure(
            measure_name, [self.values[question_id][measure_name] for question_id in sorted(self.averaged)]
        )


def references(
    qrels: Qrels,
    run: TrecRun,
    rankings: dict[str, list[str]],
    ks: list[int],
    settings: Settings,
    questions: set[str] | None = None,
) -> References:
    """The references on (qrels, run) for every question of the collection: those in the qrels and in
    `questions` (the collection's question list). `rankings` is the run in trec_eval's order."""
    names = measure_names(ks)
    if settings.ignore_identical_ids:  # as BEIR does: out of the run (and the ranking), never out of the qrels
        run = {question_id: {d: score for d, score in docs.items() if d != question_id} for question_id, docs in run.items()}
        rankings = {question_id: [d for d in docs if d != question_id] for question_id, docs in rankings.items()}
    if settings.max_docs_per_question is not None:  # trec_eval -M: the top N of the ranking (before -J)
        rankings = {question_id: docs[: settings.max_docs_per_question] for question_id, docs in rankings.items()}
        run = {question_id: {d: run[question_id][d] for d in docs} for question_id, docs in rankings.items()}
    evaluated = trec_eval_reference(qrels, run, ks, settings)
    judged_rankings = judged_only(qrels, rankings) if settings.judged_docs_only else rankings
    for question_id, values in evaluated.items():
        values.update(trec_eval_rbp(qrels[question_id], judged_rankings[question_id], settings.rbp_persistence))
        values.update(trec_eval_unj(qrels[question_id], judged_rankings[question_id], ks))
    ir_values = ir_measures_reference(qrels, rankings, ks, settings)
    printed = ir_measures_reference(qrels, rankings, ks, settings, full_precision=False)
    values: dict[str, dict[str, float]] = {}
    for question_id in set(qrels) | (questions or set()):
        row = dict(evaluated[question_id]) if question_id in evaluated else {}
        row.update(ir_values.get(question_id, {}))
        empty = empty_ranking_values(qrels.get(question_id, {}), ks, settings)
        values[question_id] = {name: row.get(name, value) for name, value in empty.items()}
    averaged = set(values) if settings.averaging == "all_questions" else set(evaluated)
    assert averaged, "no question to average over"
    return References(values, printed, averaged, names)


def assert_measures_match_references(
    con: duckdb.DuckDBPyConnection,
    collection_id: str,
    run_id: str,
    qrels: Qrels,
    run: TrecRun,
    ks: list[int],
    settings: Settings,
    questions: set[str] | None = None,
    tolerance: float = 1e-9,
) -> int:
    """question_measures and run_measures of one run equal the references on (qrels, run) under `settings`
    (the vars it was built with); returns how many values were compared.

    question_measures: exactly one row per question of the collection (the qrels' and `questions`) and measure
    (and k), measure_name trec_eval's or ir_measures' name, is_averaged per the averaging, every value within
    `tolerance` (gdeval's also within its printed precision of what gdeval prints). run_measures: one row per
    measure, the aggregation, n_questions, the value over the averaged questions, and the bootstrap interval
    around a mean. Every mismatch is collected and reported with the question's judgments and ranking.
    """
    rankings = warehouse_rankings(con, collection_id, run_id)
    assert rankings == trec_order(run), f"{collection_id}/{run_id}: raw.rankings is not trec_eval's order"
    reference = references(qrels, run, rankings, ks, settings, questions)
    where = f"{collection_id}/{run_id} [{settings.label}]"
    mismatches: list[str] = []

    def mismatch(question_id: str | None, measure_name: str, ours: object, theirs: object, what: str = "") -> None:
        line = f"{where} {measure_name}{what}: ours {ours!r}, reference {theirs!r}"
        if question_id is not None:
            judgments = qrels.get(question_id, {})
            ranking = [(doc_id, judgments.get(doc_id)) for doc_id in rankings.get(question_id, [])]
            line += f"\n    question {question_id!r}: qrels {judgments}, ranking (doc, grade) {ranking}"
        mismatches.append(line)

    rows = con.execute(
        "select question_id, measure, k, measure_name, value, is_averaged from question_measures "
        "where collection_id = ? and run_id = ?",
        [collection_id, run_id],
    ).fetchall()
    checked = 0
    seen: set[tuple[str, str]] = set()
    for question_id, measure, k, measure_name, value, is_averaged in rows:
        if question_id not in reference.values or measure_name not in reference.names:
            mismatch(question_id, measure_name, value, None, " (no such question or measure in the reference)")
            continue
        if (question_id, measure_name) in seen:
            mismatch(question_id, measure_name, value, None, " (repeated row)")
        seen.add((question_id, measure_name))
        expected_k = reference.names[measure_name]
        if (measure, k) != (measure_of(measure_name, expected_k), expected_k):
            mismatch(question_id, measure_name, (measure, k), (measure_of(measure_name, expected_k), expected_k), " k")
        if is_averaged != (question_id in reference.averaged):
            mismatch(question_id, measure_name, is_averaged, question_id in reference.averaged, " is_averaged")
        expected = reference.values[question_id][measure_name]
        if value is None or not math.isclose(value, expected, rel_tol=0, abs_tol=tolerance):
            mismatch(question_id, measure_name, value, expected)
        printed = reference.printed.get(question_id, {}).get(measure_name)
        if printed is not None and (value is None or abs(value - printed) > PRINTED_PRECISION):
            mismatch(question_id, measure_name, value, printed, " (gdeval as printed, 5 decimals)")
        checked += 1
    missing = sorted({(q, name) for q in reference.values for name in reference.names} - seen)
    for question_id, measure_name in missing[:20]:
        mismatch(question_id, measure_name, "no row", reference.values[question_id][measure_name])

    run_rows = con.execute(
        "select measure, k, measure_name, aggregation, n_questions, value, ci_low, ci_high, evaluation_settings "
        "from run_measures "
        "where collection_id = ? and run_id = ?",
        [collection_id, run_id],
    ).fetchall()
    run_seen: set[str] = set()
    for measure, k, measure_name, how, n_questions, value, ci_low, ci_high, recorded in run_rows:
        if measure_name not in reference.names or measure_name in run_seen:
            mismatch(None, measure_name, value, None, " (unknown or repeated run_measures row)")
            continue
        run_seen.add(measure_name)
        expected_k = reference.names[measure_name]
        if (measure, k) != (measure_of(measure_name, expected_k), expected_k):
            mismatch(None, measure_name, (measure, k), (measure_of(measure_name, expected_k), expected_k), " run k")
        if json.loads(recorded) != settings.evaluation_settings(ks):
            mismatch(None, measure_name, recorded, settings.evaluation_settings(ks), " evaluation_settings")
        if how != aggregation(measure_name):
            mismatch(None, measure_name, how, aggregation(measure_name), " aggregation")
        if n_questions != len(reference.averaged):
            mismatch(None, measure_name, n_questions, len(reference.averaged), " n_questions")
        expected = reference.aggregate(measure_name)
        if value is None or not math.isclose(value, expected, rel_tol=0, abs_tol=tolerance):
            mismatch(None, measure_name, value, expected, f" over {len(reference.averaged)} questions")
        if how == "sum" and (ci_low is not None or ci_high is not None):
            mismatch(None, measure_name, (ci_low, ci_high), (None, None), " bootstrap interval of a sum")
        if how == "mean" and n_questions > 1 and value is not None:
            inside = ci_low is not None and ci_high is not None and ci_low - 1e-12 <= value <= ci_high + 1e-12
            if not inside:
                mismatch(None, measure_name, (ci_low, value, ci_high), "ci_low <= value <= ci_high", " interval")
        checked += 1
    for measure_name in sorted(set(reference.names) - run_seen):
        mismatch(None, measure_name, "no run_measures row", reference.aggregate(measure_name))

    summary = {}
    for line in mismatches:
        name = line[len(where) + 1 :].split(":", 1)[0]
        summary[name] = summary.get(name, 0) + 1
    shown = "\n".join(mismatches[:25])
    assert not mismatches, f"{len(mismatches)} mismatches {summary}; {len(missing)} rows missing\n{shown}"
    return checked
