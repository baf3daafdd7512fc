"""Presets: a community's way of reporting a collection, by name. Each is a set of a collection's own settings
(retrieval_metrics/per_collection.py) and the headline measures the scorecard leads with, from the scripts that
community's published numbers come from (docs/measures.md#presets says where each comes from). The settings
themselves (names, rules, defaults) are in setting_definitions.py. A collection keeps its preset's name, and the
settings set otherwise since (per_collection.record_overrides).

    retrieval-metrics settings --collection dl19 --preset trec-dl-passage
    rm.collection_settings("dl19", preset="trec-dl-passage")
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    settings: dict[str, object]  # the collection's own settings it gives (per_collection.RULES), tie_rule too
    headline: tuple[str, ...]  # run_measures.measure_name, in the order the scorecard shows them


# Each preset says in its comment where its convention comes from (docs/measures.md#presets says the same).
PRESETS: dict[str, Preset] = {
    # the lesson's Docent scorecard: Recall@k, Precision@k and NDCG@k at k = 1..3, and MRR
    "lesson": Preset(
        {"k_values": [1, 2, 3], "relevance_level": 1, "averaging": "all_questions", "judged_docs_only": False,
         "err_max_grade": 4, "ignore_identical_ids": False, "trec_eval_version": 9, "tie_rule": "doc_order"},
        ("recall_2", "P_2", "recip_rank", "ndcg_cut_2"),
    ),
    # TREC Deep Learning 2019/2020, passage task, as anserini reports it (its dl19-passage regression page):
    # trec_eval -c -m ndcg_cut.10 (every grade), -c -l 2 -m map and -c -l 2 -m recall.1000 (the track's
    # overview: grade 2 and up is relevant for passages); trec_eval 9.0.4's numbers
    "trec-dl-passage": Preset(
        {"k_values": [10, 100, 1000], "relevance_level": 2, "averaging": "all_questions", "judged_docs_only": False,
         "ignore_identical_ids": False, "max_docs_per_question": "none", "trec_eval_version": 9,
         "tie_rule": "trec_eval"},
        ("ndcg_cut_10", "map", "recall_1000"),
    ),
    # TREC Deep Learning 2019/2020, document task, as anserini reports it (its msmarco-v1-doc dl19-doc pages):
    # trec_eval -c -M 100 -m map (MAP@100), -c -m ndcg_cut.10, -c -m recall.100, every
    # measure at level 1 (grade 1 and up is relevant for documents); -M 100 for every measure here, which changes
    # none of ndcg_cut_10 and recall_100
    "trec-dl-doc": Preset(
        {"k_values": [10, 100], "relevance_level": 1, "averaging": "all_questions", "judged_docs_only": False,
         "ignore_identical_ids": False, "max_docs_per_question": 100, "trec_eval_version": 9,
         "tie_rule": "trec_eval"},
        ("map", "ndcg_cut_10", "recall_100"),
    ),
    # TREC ad hoc (TREC 1-8, Robust04) as anserini reports it (its disk45 and robust04 regression pages):
    # trec_eval -m map -m P.30 -m ndcg_cut.20, without -c (each topic the run answers), level 1
    "trec-adhoc": Preset(
        {"k_values": [10, 20, 30, 100, 1000], "relevance_level": 1, "averaging": "retrieved_only",
         "judged_docs_only": False, "ignore_identical_ids": False, "max_docs_per_question": "none",
         "trec_eval_version": 9, "tie_rule": "trec_eval"},
        ("map", "P_30", "ndcg_cut_20"),
    ),
    # MS MARCO passage ranking (dev): MRR@10 over every judged query (msmarco_eval.py), and R@1000
    # (trec_eval -c -m recall.1000)
    "msmarco-passage": Preset(
        {"k_values": [10, 1000], "relevance_level": 1, "averaging": "all_questions", "judged_docs_only": False,
         "ignore_identical_ids": False, "trec_eval_version": 9, "tie_rule": "trec_eval"},
        ("RR@10", "recall_1000"),
    ),
    # BEIR's EvaluateRetrieval: pytrec_eval at k = 1, 3, 5, 10, 100, 1000, each query the run answers averaged, a
    # retrieved document whose id is the query's dropped (ignore_identical_ids); nDCG@10 and R@100 reported
    "beir": Preset(
        {"k_values": [1, 3, 5, 10, 100, 1000], "relevance_level": 1, "averaging": "retrieved_only",
         "judged_docs_only": False, "ignore_identical_ids": True, "trec_eval_version": 9, "tie_rule": "trec_eval"},
        ("ndcg_cut_10", "recall_100"),
    ),
    # TREC 2024 RAG retrieval as anserini reports it: trec_eval -c -m ndcg_cut.20, ndcg_cut.100 and recall.100
    "trec-rag": Preset(
        {"k_values": [20, 100], "relevance_level": 1, "averaging": "all_questions", "judged_docs_only": False,
         "ignore_identical_ids": False, "trec_eval_version": 9, "tie_rule": "trec_eval"},
        ("ndcg_cut_20", "ndcg_cut_100", "recall_100"),
    ),
}
# a stored preset's note of the settings set otherwise since: "trec-dl-passage (overridden: relevance_level)"
OVERRIDDEN = " (overridden: "


def preset_name(stored: str | None) -> str:
    """The preset's name in a stored value ("trec-dl-passage (overridden: relevance_level)": trec-dl-passage)."""
    return (stored or "").partition(OVERRIDDEN)[0].strip()
