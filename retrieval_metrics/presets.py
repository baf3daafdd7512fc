"""Presets: a community's way of reporting a collection, by name. Each is a set of a collection's own settings
(retrieval_metrics/per_collection.py) and the headline measures the scorecard leads with, from the scripts that
community's published numbers come from (docs/measures.md#presets says where each comes from).

    retrieval-metrics settings --collection dl19 --preset trec-dl
    rm.collection_settings("dl19", preset="trec-dl")
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    settings: dict[str, object]  # the collection's own settings it gives (per_collection.RULES), tie_rule too
    headline: tuple[str, ...]  # run_measures.measure_name, in the order the scorecard shows them


PRESETS: dict[str, Preset] = {
    # the lesson's Docent scorecard: Recall@k, Precision@k and NDCG@k at k = 1..3, and MRR
    "lesson": Preset(
        {"k_values": [1, 2, 3], "relevance_level": 1, "averaging": "all_questions", "judged_docs_only": False,
         "err_max_grade": 4, "ignore_identical_ids": False, "iprec_rule": "trec_eval_9", "tie_rule": "doc_order"},
        ("recall_2", "P_2", "recip_rank", "ndcg_cut_2"),
    ),
    # TREC Deep Learning as anserini reports it: trec_eval -c -m ndcg_cut.10 (every grade), -c -l 2 -m map and
    # -c -l 2 -m recall.1000 (grade 2 and up is relevant)
    "trec-dl": Preset(
        {"k_values": [10, 100, 1000], "relevance_level": 2, "averaging": "all_questions", "judged_docs_only": False,
         "ignore_identical_ids": False, "iprec_rule": "trec_eval_9",
         "tie_rule": "trec_eval"},
        ("ndcg_cut_10", "map", "recall_1000"),
    ),
    # MS MARCO passage ranking (dev): MRR@10 over every judged query (msmarco_eval.py), and R@1000
    # (trec_eval -c -m recall.1000)
    "msmarco-passage": Preset(
        {"k_values": [10, 1000], "relevance_level": 1, "averaging": "all_questions", "judged_docs_only": False,
         "ignore_identical_ids": False, "iprec_rule": "trec_eval_9",
         "tie_rule": "trec_eval"},
        ("RR@10", "recall_1000"),
    ),
    # BEIR's EvaluateRetrieval: pytrec_eval at k = 1, 3, 5, 10, 100, 1000, each query the run answers averaged, a
    # retrieved document whose id is the query's dropped (ignore_identical_ids); nDCG@10 and R@100 reported
    "beir": Preset(
        {"k_values": [1, 3, 5, 10, 100, 1000], "relevance_level": 1, "averaging": "retrieved_only",
         "judged_docs_only": False, "ignore_identical_ids": True, "iprec_rule": "trec_eval_9",
         "tie_rule": "trec_eval"},
        ("ndcg_cut_10", "recall_100"),
    ),
    # TREC 2024 RAG retrieval as anserini reports it: trec_eval -c -m ndcg_cut.20, ndcg_cut.100 and recall.100
    "trec-rag": Preset(
        {"k_values": [20, 100], "relevance_level": 1, "averaging": "all_questions", "judged_docs_only": False,
         "ignore_identical_ids": False, "iprec_rule": "trec_eval_9",
         "tie_rule": "trec_eval"},
        ("ndcg_cut_20", "ndcg_cut_100", "recall_100"),
    ),
}
