"""Write random.ideal.run and trec_eval 10.0's outputs of DCG, its ideal and nDCG with a gain map on the random
collection (random.qrels, random.run: make_random.py).

random.ideal.run ranks each question's judged documents by grade, highest first (score = grade; documents of a
grade tie, which no DCG notices): trec_eval's `dcg` of it under `-M k` is the ideal DCG of the top k, IDCG@k.

    python tests/data/trec_eval_10/make_gains.py tests/data/trec_eval_10 /path/to/trec_eval

trec_eval 10.0 frees a gain map's parameters once per measure that shares them (ndcg, dcg and ideal_dcg): given
two of them with a map in one call it stops ("double free"), so each output is one measure.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

GAINS = "0=0,1=1,2=3"  # ir_measures' nDCG(gains={0:0,1:1,2:3}); grade 3 keeps its own gain
OUTPUTS = {  # output file: trec_eval's options, before the qrels and the run
    "out.random.c.ndcg_gains": ["-q", "-c", "-m", f"ndcg.{GAINS}"],
    "out.random.c.dcg_gains": ["-q", "-c", "-m", f"dcg.{GAINS}"],
    "out.random.c.ideal_dcg_gains": ["-q", "-c", "-m", f"ideal_dcg.{GAINS}"],
    "out.random.c.dcg": ["-q", "-c", "-m", "dcg", "-m", "ideal_dcg"],
    "out.random.c.M10.dcg": ["-q", "-c", "-M", "10", "-m", "dcg"],
}
IDEAL_OUTPUT = ("out.random.ideal.c.M10.dcg", ["-q", "-c", "-M", "10", "-m", "dcg"])


def ideal_run(qrels: Path) -> str:
    """Each question's documents with a grade > 0, by grade descending (doc id ascending within a grade)."""
    judged = [line.split() for line in qrels.read_text().splitlines() if line.strip()]
    ranked = sorted(((q, d, int(g)) for q, _, d, g in judged if int(g) > 0), key=lambda row: (row[0], -row[2], row[1]))
    return "".join(f"{q} Q0 {d} 0 {g} ideal\n" for q, d, g in ranked)


def main(folder: Path, trec_eval: str) -> None:
    qrels, run = folder / "random.qrels", folder / "random.run"
    (folder / "random.ideal.run").write_text(ideal_run(qrels))
    outputs = [(name, options, run) for name, options in OUTPUTS.items()]
    outputs.append((IDEAL_OUTPUT[0], IDEAL_OUTPUT[1], folder / "random.ideal.run"))
    for name, options, ranked in outputs:
        printed = subprocess.run([trec_eval, *options, str(qrels), str(ranked)], capture_output=True, text=True,
                                 check=True).stdout  # fmt: skip
        (folder / name).write_text(printed)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
