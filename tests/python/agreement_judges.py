"""A judge plug-in for tests/python/test_judge_agreement.py (`judge --judge agreement_judges:NoisyJudge`): it
knows the people's grades and copies each with probability `keep`, else guesses; deterministic per pair."""

from __future__ import annotations

import random


class NoisyJudge:
    version = "2.0"

    def __init__(self, qrels: str, keep: float = 0.7, seed: int = 0) -> None:
        self.grades: dict[tuple[str, str], int] = {}
        with open(qrels, encoding="utf-8") as handle:
            for line in handle:
                question_id, _, doc_id, grade = line.split()
                self.grades[question_id, doc_id] = int(grade)
        self.keep, self.seed = keep, seed

    def judge(self, item: object) -> tuple[int, str]:
        key = (getattr(item, "question_id"), getattr(item, "doc_id"))
        rng = random.Random(f"{self.seed}/{key[0]}/{key[1]}")
        if key in self.grades and rng.random() < self.keep:
            return self.grades[key], "copied"
        return rng.choice([0, 1, 2]), "guessed"
