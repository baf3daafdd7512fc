"""Write float_ties.qrels and float_ties.run: a run whose scores differ only past a 32-bit float's precision.

Deterministic (seed 49). Each score is 100 + 0.000001 * s for a whole s from 0 to 40: as doubles they are 41
distinct values, as 32-bit floats (whose step near 100 is 2^-17, about 7.6e-6) about six, so trec_eval 9 and
pytrec_eval rank most of a question's documents by doc id, and trec_eval 10.0 by score. Grades -1 .. 3,
documents not in the qrels, rankings of 5 to 60 documents, a question the run does not have (q05).

    python tests/data/trec_eval_10/make_float_ties.py tests/data/trec_eval_10
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

GRADES = [-1, 0, 0, 0, 1, 1, 2, 3]


def main(folder: Path) -> None:
    rng = random.Random(49)
    questions = [f"q{i:02d}" for i in range(1, 13)]
    docs = [f"d{i:03d}" for i in range(120)]
    qrels = {q: {d: rng.choice(GRADES) for d in rng.sample(docs, rng.randint(5, 30))} for q in questions}
    lines = []
    for question_id in questions:
        if question_id == "q05":
            continue
        judged = list(qrels[question_id])
        length = rng.choice([5, 12, 30, 60])
        ranking = rng.sample(judged, min(len(judged), length // 2 + 1))
        ranking += rng.sample([doc for doc in docs if doc not in ranking], length - len(ranking))
        for doc_id in ranking:
            lines.append(f"{question_id} Q0 {doc_id} 0 {100 + 0.000001 * rng.randint(0, 40)!r} float_ties")
    rng.shuffle(lines)
    (folder / "float_ties.qrels").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, judgments in qrels.items() for d, g in sorted(judgments.items()))
    )
    (folder / "float_ties.run").write_text("".join(f"{line}\n" for line in lines))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
