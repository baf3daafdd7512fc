"""Bounded statistics stay in their bounds, and exact fractions come out exact.

Each bounded column of a mart declares its range once, beside it in its family's YAML (models/marts/*/_*__models.yml)
(`config: {meta: {range: [low, high]}}`). One warehouse where every such mart has rows (the lesson with every
retriever's run, plus `tiny`: a TREC collection of 16 questions and 8 runs, a judging pool, an automatic judge's
qrels version and then a person's) is checked column by column: every declared column of every mart lies in its
range (NaN and infinities fail), on at least one row. Which columns must declare one (the rule): every DOUBLE
column of a mart whose name has, as one of its underscore-separated parts, a word of BOUNDED_WORDS (a
probability, p-value, share, rate, correlation, kappa, overlap, Judged@k, or an IR measure bounded by 1);
integer columns are counts or ranks and need none. A new column named so without a range fails the test.

And the numbers that once came out past their bounds or off by a bit come out exact: Kendall's tau, tau_AP and
RBO are 1.0 for leaderboards the new judgments leave as they were (8 runs, 28 pairs: tau as (C - D) / sqrt(P) /
sqrt(P) gave 0.9999999999999998 and, on the judge's resamples, 1.0000000000000002), and Judged@3 is 0.5 for 24 of
48 documents judged (the mean of the questions' shares gave 0.49999999999999994).
"""

from __future__ import annotations

import math
import re

import pytest
import yaml

from conftest import REPO_ROOT, Warehouse
from test_judge_agreement import judge

pytestmark = pytest.mark.dbt

MARTS_YAMLS = sorted((REPO_ROOT / "models" / "marts").glob("*/_*__models.yml"))  # one per family
BOUNDED_WORDS = {"hit", "rate", "recall", "precision", "ndcg", "mrr", "reciprocal", "average", "p_value", "share",
                 "kappa", "tau", "rbo", "judged", "coverage", "agreement", "correlation", "ratio", "fraction",
                 "probability"}  # fmt: skip
N_RUNS = 8
# judged documents in the pooled run's top 3, question by question: 24 of 48, whose shares n / 3 added in
# question order and divided by 16 give 0.49999999999999994
JUDGED_IN_TOP_3 = [1, 2, 2, 2, 3, 2, 3, 2, 1, 0, 1, 2, 1, 1, 0, 1]
QUESTIONS = [f"q{number:02d}" for number in range(len(JUDGED_IN_TOP_3))]


def declared_ranges() -> dict[str, dict[str, tuple[float, float]]]:
    """{mart: {column: (low, high)}} from the marts' YAML."""
    ranges: dict[str, dict[str, tuple[float, float]]] = {}
    for model in (model for path in MARTS_YAMLS for model in yaml.safe_load(path.read_text())["models"]):
        for column in model.get("columns", []):
            found = ((column.get("config") or {}).get("meta") or {}).get("range")
            if found is not None:
                low, high = found
                assert isinstance(low, int | float) and isinstance(high, int | float) and low < high, (model, found)
                ranges.setdefault(model["name"], {})[column["name"]] = (float(low), float(high))
    return ranges


def marts() -> list[str]:
    return sorted(path.stem for path in (REPO_ROOT / "models" / "marts").glob("*/*.sql"))


def looks_bounded(column: str) -> bool:
    """The rule of the module docstring: one of BOUNDED_WORDS as an underscore-separated part of the name."""
    return any(re.search(rf"(^|_){word}(_|$)", column) for word in BOUNDED_WORDS)


@pytest.fixture(scope="module")
def bounded(every_retriever: Warehouse, tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    """Every retriever's lesson warehouse plus `tiny`: 16 questions, each with one relevant document (d9) and
    JUDGED_IN_TOP_3 of d0, d1, d2 judged not relevant; run i ranks d9 at place i + 1 among d0..d7 (so every
    measure's leaderboard of the 8 runs is in run order, no ties in recip_rank); a NoisyJudge grades the judged
    pairs (version 1), run3 (top 3: d0, d1, d2) is pooled at depth 3 (the first build), and a person's label
    file judges q00's d7 not relevant (version 2, the second build): the last document of every run, below the
    relevant one, so most measures keep every run's value."""
    folder = tmp_path_factory.mktemp("bounds")
    qrels = folder / "qrels.txt"
    qrels.write_text("".join(
        "".join(f"{q} 0 {q}-d{j} 0\n" for j in range(judged)) + f"{q} 0 {q}-d9 1\n"
        for q, judged in zip(QUESTIONS, JUDGED_IN_TOP_3, strict=True)))  # fmt: skip
    warehouse = every_retriever.copy(folder / "warehouse")
    for number in range(N_RUNS):
        run = folder / f"run{number}.txt"
        lines = []
        for q in QUESTIONS:
            docs = [f"{q}-d{j}" for j in range(8)]
            docs.insert(number, f"{q}-d9")
            lines += [f"{q} Q0 {doc} {rank} {len(docs) - rank} run{number}\n" for rank, doc in enumerate(docs, 1)]
        run.write_text("".join(lines))
        extra = ["--qrels", str(qrels)] if number == 0 else []
        result = warehouse.cli("import", "--collection", "tiny", *extra, "--run", str(run), "--run-id", f"run{number}")
        assert result.returncode == 0, result.stdout + result.stderr
    result = judge(warehouse, "--collection", "tiny", "--judge", "agreement_judges:NoisyJudge", "--param",
                   f"qrels={qrels}", "--param", "keep=0.6", "--pairs", "judged")  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    result = warehouse.cli("pool", "--collection", "tiny", "--runs", "run3", "--depth", "3")
    assert result.returncode == 0, result.stdout + result.stderr
    labels = folder / "labels.csv"
    labels.write_text("question_id,doc_id,grade\nq00,q00-d7,0\n")  # every run's 9th: below every cutoff
    result = warehouse.cli("import", "--collection", "tiny", "--judgments", str(labels), "--judge", "ann", "--build")
    assert result.returncode == 0, result.stdout + result.stderr
    return warehouse


def test_every_column_named_as_bounded_declares_its_range(bounded: Warehouse) -> None:
    ranges = declared_ranges()
    types = bounded.rows("select table_name, column_name, data_type from information_schema.columns "
                         "where table_schema = 'main' and list_contains(?, table_name)", [marts()])  # fmt: skip
    assert {table for table, _, _ in types} == set(marts())
    undeclared = sorted(f"{table}.{column}" for table, column, data_type in types
                        if data_type == "DOUBLE" and looks_bounded(column) and column not in ranges.get(table, {}))  # fmt: skip
    assert not undeclared, f"bounded columns without a range in the marts' YAML: {undeclared}"
    present = {(table, column) for table, column, _ in types}
    missing = sorted(f"{t}.{c}" for t, columns in ranges.items() for c in columns if (t, c) not in present)
    assert not missing, f"ranges declared for columns that do not exist: {missing}"
    assert looks_bounded("randomization_p_value_holm") and looks_bounded("judged_now") and not looks_bounded("dcg")


def test_every_declared_column_stays_within_its_range(bounded: Warehouse) -> None:
    ranges = declared_ranges()
    assert len(ranges) >= 10 and sum(map(len, ranges.values())) >= 60  # the YAML is read, not silently empty
    outside: list[str] = []
    for table, columns in sorted(ranges.items()):
        checks = ", ".join(
            f"count(*) filter (where not ({c} between {low!r} and {high!r})), min({c}), max({c}), count({c})"
            for c, (low, high) in columns.items())  # fmt: skip
        (row,) = bounded.rows(f"select count(*), {checks} from main.{table}")
        assert row[0] > 0, f"{table} has no rows: its ranges would pass unchecked"
        for number, (column, (low, high)) in enumerate(columns.items()):
            n_outside, smallest, largest, n_values = row[1 + 4 * number: 5 + 4 * number]
            if n_outside:
                outside.append(f"{table}.{column}: {n_outside} value(s) outside [{low}, {high}] "
                               f"(min {smallest!r}, max {largest!r})")  # fmt: skip
    assert not outside, "\n".join(outside)


def test_unchanged_leaderboards_correlate_exactly_1(bounded: Warehouse) -> None:
    rows = bounded.rows(
        "select c.measure_name, c.n_runs, c.kendall_tau, c.tau_ap, c.rbo, "
        "bool_and(v.value_from = v.value_to), count(distinct v.value_from) "
        "from qrels_version_leaderboard_changes as c inner join qrels_version_changes as v "
        "on c.collection_id = v.collection_id and c.from_qrels_version = v.from_qrels_version "
        "and c.to_qrels_version = v.to_qrels_version and c.measure_name = v.measure_name "
        "where c.collection_id = 'tiny' group by all")  # fmt: skip
    unchanged = [row for row in rows if row[5]]
    assert len(unchanged) >= 10
    for name, n_runs, kendall, tau_ap, rbo, _, n_values in unchanged:
        assert n_runs == N_RUNS
        assert (kendall, tau_ap, rbo) == (1.0 if n_values > 1 else None, 1.0, 1.0), name
    assert any(row[0] == "recip_rank" and row[6] == N_RUNS for row in unchanged)  # no ties: every pair counts
    pairs = N_RUNS * (N_RUNS - 1) // 2
    assert pairs / math.sqrt(pairs) / math.sqrt(pairs) != 1.0  # the formula as it was: (C - D) / sqrt(P) / sqrt(P)


def test_a_share_of_24_in_48_is_exactly_one_half(bounded: Warehouse) -> None:
    (row,) = bounded.rows("select n_questions, n_unjudged_now, judged_now, n_unjudged_after, judged_after "
                          "from judging_pool_coverage where collection_id = 'tiny' and run_id = 'run3'")  # fmt: skip
    assert row == (16, 24, 0.5, 0, 1.0)
    mean_of_shares = 0.0
    for judged in JUDGED_IN_TOP_3:
        mean_of_shares += judged / 3
    assert mean_of_shares / len(JUDGED_IN_TOP_3) != 0.5  # the way it was computed
    others = bounded.rows("select judged_now from judging_pool_coverage where collection_id = 'tiny' and run_id <> 'run3'")
    assert len(others) == N_RUNS - 1 and all(0 <= value <= 1 for (value,) in others)


def test_kappas_stay_within_minus_1_and_1(bounded: Warehouse) -> None:
    (row,) = bounded.rows("select n_pairs, kappa, weighted_kappa_linear, weighted_kappa_quadratic "
                          "from judge_agreement where collection_id = 'tiny'")  # fmt: skip
    assert row[0] == len(QUESTIONS) + sum(JUDGED_IN_TOP_3)
    assert all(value is not None and -1 <= value <= 1 for value in row[1:])


def test_the_rule_sees_the_marts_yaml() -> None:
    """The rule and the YAML reader without a warehouse: a bounded name is caught, a declared range is read."""
    assert [c for c in ["kendall_tau", "ndcg_rank", "rbo_ci_low", "t_statistic", "hit_rate_vs_baseline", "value",
                        "judged_after", "effect_size", "mean_latency_ms"] if looks_bounded(c)] == [
        "kendall_tau", "ndcg_rank", "rbo_ci_low", "hit_rate_vs_baseline", "judged_after"]  # fmt: skip
    assert declared_ranges()["judging_pool_coverage"] == {"judged_now": (0.0, 1.0), "judged_after": (0.0, 1.0)}
