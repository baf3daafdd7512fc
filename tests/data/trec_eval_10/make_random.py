"""Write random.qrels and random.run: a small collection for comparing every all_trec family with trec_eval 10.0.

Deterministic (seed 48). What it holds on purpose: grades -2 .. 3 (negative grades are judged but unsampled to
infAP and unjudged to unj and rbp_resid), retrieved documents not in the qrels, scores from a coarse grid so that
many tie (trec_eval breaks a tie by doc id, descending; the grid's values are exact as 32-bit floats, so trec_eval
10.0's doubles and the warehouse's 32-bit floats order them alike), rankings shorter and longer than the cutoffs,
a question the run does not have (q05: only -c counts it), a question with only grade-0 judgments (q06), one with
only negative grades (q07), and questions only in the run (q90, q91: ignored).

    python tests/data/trec_eval_10/make_random.py tests/data/trec_eval_10
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

GRADES = [-2, -1, 0, 0, 0, 1, 1, 2, 3]


def main(folder: Path) -> None:
    rng = random.Random(48)
    questions = [f"q{i:02d}" for i in range(1, 16)]
    docs = [f"d{i:03d}" for i in range(80)]
    qrels: dict[str, dict[str, int]] = {}
    for question_id in questions:
        judged = rng.sample(docs, rng.randint(3, 25))
        if question_id == "q06":
            grades = [0] * len(judged)
        elif question_id == "q07":
            grades = [rng.choice([-2, -1]) for _ in judged]
        else:
            grades = [rng.choice(GRADES) for _ in judged]
        qrels[question_id] = dict(zip(judged, grades, strict=True))
    lines = []
    for question_id in [*questions, "q90", "q91"]:
        if question_id == "q05":
            continue
        length = rng.choice([2, 6, 12, 25, 40, 60])
        judged = list(qrels.get(question_id, {}))
        ranking = rng.sample(judged, min(len(judged), length // 2 + 1))
        ranking += rng.sample([doc for doc in docs if doc not in ranking], length - len(ranking))
        for doc_id in ranking:
            score = rng.randint(0, 24) / 4  # 0, 0.25, ..., 6: ties
            lines.append(f"{question_id} Q0 {doc_id} 0 {score} random")
    rng.shuffle(lines)
    (folder / "random.qrels").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, judgments in qrels.items() for d, g in sorted(judgments.items()))
    )
    (folder / "random.run").write_text("".join(f"{line}\n" for line in lines))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
