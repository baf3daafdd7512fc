"""retrieval_metrics/stats.py against scipy: the bootstrap intervals are scipy.stats.bootstrap's percentile
intervals, drawn from the same generator in the same batches; the paired tests are scipy's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from retrieval_metrics.stats import BATCH_VALUES, compared_groups, intervals


@pytest.mark.parametrize("n_questions", [2, 7, 60])
def test_intervals_are_scipys_percentile_bootstrap(n_questions: int) -> None:
    rng = np.random.default_rng(n_questions)
    matrix = rng.random((4, n_questions))
    matrix[3] = np.log(np.maximum(matrix[3], 0.00001))  # a geometric-mean row: its values are logs
    geometric = np.array([False, False, False, True])
    low, high = intervals(matrix, geometric, 2_000, seed=7)
    for row in range(matrix.shape[0]):
        mean = (lambda x, axis: np.exp(np.mean(x, axis=axis))) if geometric[row] else np.mean
        reference = stats.bootstrap(
            (matrix[row],), mean, n_resamples=2_000, method="percentile", vectorized=True,
            batch=BATCH_VALUES // matrix.size, random_state=np.random.default_rng(7),
        ).confidence_interval  # fmt: skip
        assert low[row] == pytest.approx(reference.low, abs=1e-12)
        assert high[row] == pytest.approx(reference.high, abs=1e-12)


def test_compared_groups_are_scipys_paired_tests_per_group() -> None:
    rng = np.random.default_rng(3)
    rows = []
    for group in ("a", "b"):
        for question in range(12):
            run, baseline = rng.random(), rng.random()
            rows.append({"group": group, "question_id": f"q{question:02d}", "measure": "P", "k": 10,
                         "run_value": run, "baseline_value": baseline,
                         "outcome": "win" if run > baseline else "loss"})  # fmt: skip
    paired = pd.DataFrame(rows).sample(frac=1, random_state=1)  # any row order: each group sorted by question
    compared = compared_groups(paired, ["group"], n_permutations=100, seed=5).set_index("group")
    for group, rows_of_group in pd.DataFrame(rows).groupby("group"):
        run, baseline = rows_of_group["run_value"].to_numpy(), rows_of_group["baseline_value"].to_numpy()
        t = stats.ttest_rel(run, baseline)
        assert compared.loc[group, "t_p_value"] == pytest.approx(t.pvalue, abs=1e-12)
        assert compared.loc[group, "mean_difference"] == pytest.approx((run - baseline).mean(), abs=1e-12)
        assert compared.loc[group, "n_questions"] == 12 and not compared.loc[group, "is_exact_randomization"]
        assert compared.loc[group, "wins"] + compared.loc[group, "losses"] == 12


def test_one_question_has_the_exact_randomization_p_value_1() -> None:
    """scipy refuses one observation; its two sign flips tie in |mean difference|: p = 1, exact."""
    one = pd.DataFrame([{"group": "a", "question_id": "q", "measure": "P", "k": 1, "run_value": 1.0,
                         "baseline_value": 0.0, "outcome": "win"}])  # fmt: skip
    row = compared_groups(one, ["group"], n_permutations=100, seed=5).iloc[0]
    assert (row["randomization_p_value"], row["n_permutations"], row["is_exact_randomization"]) == (1.0, 2, True)
    assert row["t_p_value"] is None and row["effect_size"] is None
