"""Two measures of one's own, outside the package: one in SQL, one in Python.

    retrieval-metrics settings --collection C --set user_measures=docs/examples/user_measures.py
    retrieval-metrics build

Each is then a row of question_measures and run_measures (with its 95% interval), paired against the
collection's baseline in the comparisons, in the report and in the serving views, like the registry's measures.

- relevant_in_top_3: how many relevant documents the top 3 hold, in SQL over the question's judged retrieved
  documents (the columns the registry's measures read: position, relevance, is_relevant, gain, num_rel, ...).
- graded_precision_5: the mean grade (negative grades and unjudged documents as 0) of the top 5, a Python
  function of one question's qrels and run, as ir_measures' define_byquery takes it.
"""

from retrieval_metrics.user_measures import define_byquery, define_sql


def graded_precision_5(qrels, run):
    """The top 5's grades (0 for a document without one), summed, / 5."""
    grades = dict(zip(qrels["doc_id"], qrels["relevance"], strict=True))
    top = run.sort_values("rank")["doc_id"].head(5)
    return sum(max(grades.get(doc_id, 0), 0) for doc_id in top) / 5


MEASURES = [
    define_sql("relevant_in_top_3", "count(case when is_relevant and position <= 3 then 1 end)",
               description="relevant documents in the top 3"),
    define_byquery("graded_precision_5", graded_precision_5,
                   description="the top 5's grades summed, / 5 (negative and unjudged as 0)"),
]
