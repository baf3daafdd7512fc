{#- The measure registry: every measure the warehouse computes, defined once, here. Everything downstream (the
    long and wide measure tables, run means and intervals, the leaderboard, comparisons and significance, the
    report, the exports) loops over this list; nothing else names a measure.

    A measure is one dict (registry_schema() below lists the keys and the kind of each value):
      name         its name as its reference prints it, without the cutoff: trec_eval's (P, ndcg_cut, bpref,
                   iprec_at_recall_0.50) or, for measures trec_eval lacks, ir_measures' (Judged, ERR, RBP, ...)
      column       a SQL identifier for it in the wide intermediate tables
      at_k         true: computed once per cutoff k of the collection's k_values, over the top k; false: over the
                   whole ranking, once (k is null in the long tables)
      sql          an aggregate over one question's judged retrieved documents (int_judged_docs_retrieved) and
                   its constants: the columns of measure_input_columns below. The measure's inputs are the ones
                   of those columns it reads (measure_catalog.inputs)
      reference    trec_eval (printed P_5: name, underscore, k) or ir_measures (printed Judged@5: name, @, k)
      aggregation  how a run's value is formed from its questions' values: mean, sum (trec_eval's `all` line
                   sums the counts) or geometric_mean (exp of the mean of the per-question logs: gm_map)
      compared     whether the comparison marts pair it question by question against the baseline
      description  one line: the formula (docs/measures.md explains the conventions)
    and, optional:
      question_metrics_column, run_metrics_column
                   its column in the wide tables question_metrics / run_metrics / run_leaderboard
      uses_relevance_level
                   default true: false for a measure that reads the grades themselves, not whether a grade
                   reaches the relevance level (num_ret, NDCG, RBP, ERR); the scorecard marks the others with the
                   level when it is not 1
      by_default   default true: computed for every collection; false: only as the instances a collection lists
                   (its setting `measures`)
      instance     its parameters, as a collection lists an instance of it: ir_measures' name, each parameter
                   with its rule and default, and @k if it takes a cutoff, e.g. "AP(rel: level = 1)",
                   "nDCG(gains: gains = {})@k", "RBP(p: probability = 0.8)". The rules (parameter_problem):
                   level an integer >= 1 (the lowest relevant grade, trec_eval -l), probability a number
                   strictly between 0 and 1, gains a map of grades >= 0 to integer gains >= 0 ({}: each grade
                   its own gain). An instance is named as ir_measures prints it: RBP(p=0.5), AP(rel=2),
                   nDCG(gains={2:3})@10 (a parameter at its default, and a grade mapped to itself, left out).
                   Its SQL may read only instance_input_columns(): is_relevant, num_rel and the running counts
                   at its rel, gain by its gains, rbp_weight at its p
      trec_eval_instance
                   trec_eval's printed name for an instance ({k}: the cutoff), where trec_eval computes the same
                   number; with its options: rel as -l, gains as -m name.grade=gain,... (trec_eval_name)
    Every entry is checked against registry_schema() when dbt parses the project (checked_registry): a key not
    listed, a missing key, a value outside its kind, a parameter rule unknown or a default outside its rule, or
    an instance reading an input instances lack fails the parse, naming the entry and the key.
    The order is trec_eval's (its -q output), then ir_measures' measures.
    Adding a measure: one dict here, one line in docs/measures.md and its test (a trec_eval measure: one case in
    the unit tests, models/intermediate/_intermediate__models.yml, and its reference's name in
    tests/python/trec_reference.py; a measure with parameters: a case in tests/python/test_measure_instances.py).
    retrieval-metrics reads the `instance` strings of this file to check a collection's instances before dbt
    starts (retrieval_metrics/measure_instances.py): keep each on one line. -#}
{% macro measure_registry() -%}
    {%- set relevant_count = "count(case when is_relevant then 1 end)" -%}
    {%- set num_rel_ret = "cast(" ~ relevant_count ~ " as double)" -%}
    {%- set recall = "case when num_rel > 0 then cast(" ~ relevant_count ~ " as double) / num_rel else 0.0 end" -%}
    {%- set ndcg = "case when ideal_dcg > 0 then " ~ linear_dcg() ~ " / ideal_dcg else 0.0 end" -%}
    {%- set ap = "case when num_rel > 0 then " ~ rank_sum(
        "case when is_relevant then cast(relevant_so_far as double) / position else 0.0 end") ~ " / num_rel else 0.0 end" -%}
    {%- set bpref = "case when num_rel > 0 then " ~ rank_sum(
        "case when not is_relevant or is_relevant is null then 0.0 when nonrelevant_above = 0 then 1.0"
        ~ " else 1.0 - cast(least(nonrelevant_above, num_rel) as double) / least(num_rel, num_judged_nonrel) end"
    ) ~ " / num_rel else 0.0 end" -%}
    {%- set relevant_in_top_r = "count(case when is_relevant and position <= num_rel then 1 end)" -%}
    {%- set measures = [
        {"name": "num_ret", "column": "num_ret", "at_k": false, "reference": "trec_eval", "aggregation": "sum",
         "compared": false, "uses_relevance_level": false, "sql": "cast(num_ret as double)",
         "description": "documents retrieved (after judged_docs_only, if on)"},
        {"name": "num_rel", "column": "num_rel", "at_k": false, "reference": "trec_eval", "aggregation": "sum",
         "compared": false, "sql": "cast(num_rel as double)",
         "description": "relevant documents judged for the question (grade >= relevance_level)"},
        {"name": "num_rel_ret", "column": "num_rel_ret", "at_k": false, "reference": "trec_eval", "aggregation": "sum",
         "compared": false, "sql": "cast(" ~ relevant_count ~ " as double)",
         "description": "relevant documents retrieved"},
        {"name": "map", "column": "average_precision", "at_k": false, "reference": "trec_eval", "aggregation": "mean",
         "compared": true, "sql": ap, "instance": "AP(rel: level = 1)", "trec_eval_instance": "map{rel}",
         "question_metrics_column": "average_precision", "run_metrics_column": "mean_average_precision",
         "description": "average precision: sum over retrieved relevant docs of (relevant at or above it / its rank), / "
             ~ "num_rel"},
        {"name": "gm_map", "column": "gm_map", "at_k": false, "reference": "trec_eval", "aggregation": "geometric_mean",
         "compared": false, "sql": "ln(greatest(" ~ ap ~ ", 0.00001))",
         "description": "per question ln(max(AP, 0.00001)); the run's value is exp of their mean (a geometric mean of AP)"},
        {"name": "Rprec", "column": "rprec", "at_k": false, "reference": "trec_eval", "aggregation": "mean",
         "compared": true,
         "sql": "case when num_rel > 0 then cast(" ~ relevant_in_top_r ~ " as double) / num_rel else 0.0 end",
         "question_metrics_column": "r_precision", "run_metrics_column": "r_precision",
         "description": "precision at rank R = num_rel"},
        {"name": "bpref", "column": "bpref", "at_k": false, "reference": "trec_eval", "aggregation": "mean",
         "compared": true,
         "sql": bpref,
         "description": "sum over retrieved relevant docs of 1 - min(judged non-relevant docs above it, R) / min(R, judged "
             ~ "non-relevant), / R; grade < 0 counts as unjudged"},
        {"name": "recip_rank", "column": "recip_rank", "at_k": false, "reference": "trec_eval", "aggregation": "mean",
         "compared": true, "sql": "coalesce(1.0 / min(case when is_relevant then position end), 0.0)",
         "instance": "RR(rel: level = 1)", "trec_eval_instance": "recip_rank{rel}",
         "question_metrics_column": "reciprocal_rank", "run_metrics_column": "mrr",
         "description": "1 / rank of the first relevant document, 0 if none was retrieved"}
    ] -%}
    {%- set iprec_columns = [] -%}
    {%- for tenth in range(11) -%}
        {%- set level = "%.2f" % (tenth / 10) -%}
        {#- the recall level as a count of relevant docs, by the collection's iprec_rule: trec_eval 9's (pytrec_eval's)
            (long)(level * R + 0.9), or trec_eval 10's lround(level * R) -#}
        {%- set scaled = "cast('" ~ level ~ "' as double) * num_rel" -%}
        {%- set needed = "cast(case when iprec_rule = 'trec_eval_10' then (case when " ~ scaled ~ " - floor(" ~ scaled
            ~ ") >= 0.5 then ceil(" ~ scaled ~ ") else floor(" ~ scaled ~ ") end) else floor(" ~ scaled
            ~ " + 0.9) end as integer)" -%}
        {#- the highest precision at a relevant document at or past that count -#}
        {%- set best_precision = "max(case when is_relevant and relevant_so_far >= greatest(" ~ needed
            ~ ", 1) then cast(relevant_so_far as double) / position end)" -%}
        {%- do iprec_columns.append("iprec_at_recall_" ~ level | replace(".", "_")) -%}
        {%- do measures.append(
            {"name": "iprec_at_recall_" ~ level, "column": iprec_columns[-1], "at_k": false, "reference": "trec_eval",
             "aggregation": "mean", "compared": false,
             "sql": "case when " ~ needed ~ " > " ~ relevant_count
                 ~ " then 0.0 else coalesce(" ~ best_precision ~ ", 0.0) end",
             "description": "interpolated precision at recall " ~ level ~ ": the highest precision at any rank whose recall reaches it"}
        ) -%}
    {%- endfor -%}
    {%- set iprec_sums = [] -%}
    {%- for measure in measures if measure.column in iprec_columns -%}
        {%- do iprec_sums.insert(0, "(" ~ measure.sql ~ ")") -%}
    {%- endfor -%}
    {%- do measures.extend([
        {"name": "P", "column": "p", "at_k": true, "reference": "trec_eval", "aggregation": "mean",
         "compared": true, "sql": "cast(" ~ relevant_count ~ " as double) / k",
         "instance": "P(rel: level = 1)@k", "trec_eval_instance": "P_{k}{rel}",
         "question_metrics_column": "precision", "run_metrics_column": "precision",
         "description": "relevant in the top k / k (k even when fewer were retrieved)"},
        {"name": "recall", "column": "recall", "at_k": true, "reference": "trec_eval", "aggregation": "mean",
         "compared": true, "sql": recall, "instance": "R(rel: level = 1)@k", "trec_eval_instance": "recall_{k}{rel}",
         "question_metrics_column": "recall", "run_metrics_column": "recall",
         "description": "relevant in the top k / num_rel"},
        {"name": "infAP", "column": "infap", "at_k": false, "reference": "trec_eval", "aggregation": "mean",
         "compared": true, "sql": "case when num_rel > 0 then " ~ rank_sum(
            "case when not is_relevant or is_relevant is null then 0.0 when position = 1 then 1.0 else 1.0 / position"
            ~ " + (cast(position - 1 as double) / position) * (cast(judged_above as double) / (position - 1))"
            ~ " * ((relevant_so_far - 1 + 1e-5) / (relevant_so_far - 1 + nonrelevant_above + 2 * 1e-5)) end"
         ) ~ " / num_rel else 0.0 end",
         "description": "inferred AP (Yilmaz and Aslam 2006), trec_eval's: sum over retrieved relevant docs at rank r > 1 of "
             ~ "1/r + ((r - 1)/r) (judged above / (r - 1)) ((relevant above + e) / (judged non-negative above + "
             ~ "2e)), 1 at rank 1, / R; e = 0.00001, a grade < 0 judged but not sampled"},
        {"name": "gm_bpref", "column": "gm_bpref", "at_k": false, "reference": "trec_eval", "aggregation": "geometric_mean",
         "compared": false, "sql": "ln(greatest(" ~ bpref ~ ", 0.00001))",
         "description": "per question ln(max(bpref, 0.00001)); the run's value is exp of their mean (a geometric mean of "
             ~ "bpref)"}
    ]) -%}
    {#- precision at multiples of R, trec_eval's cutoff (long)(m * R + 0.9) documents -#}
    {%- for multiple in ["0.2", "0.4", "0.6", "0.8", "1.0", "1.2", "1.4", "1.6", "1.8", "2.0"] -%}
        {%- set cut = "cast(floor(cast('" ~ multiple ~ "' as double) * num_rel + 0.9) as integer)" -%}
        {%- set printed = "%.2f" % (multiple | float) -%}
        {%- do measures.append(
            {"name": "Rprec_mult_" ~ printed, "column": "rprec_mult_" ~ printed | replace(".", "_"), "at_k": false,
             "reference": "trec_eval", "aggregation": "mean", "compared": false,
             "sql": "case when " ~ cut ~ " > 0 then cast(count(case when is_relevant and position <= " ~ cut
                ~ " then 1 end) as double) / " ~ cut ~ " else 0.0 end",
             "description": "precision at rank " ~ printed ~ " R: relevant in the top (long)(" ~ printed ~ " R + 0.9) / that many (0 when it is 0)"}
        ) -%}
    {%- endfor -%}
    {%- set set_precision = num_rel_ret ~ " / num_ret" -%}
    {%- set set_recall = num_rel_ret ~ " / num_rel" -%}
    {%- do measures.extend([
        {"name": "utility", "column": "utility", "at_k": false, "reference": "trec_eval", "aggregation": "mean",
         "compared": true, "sql": "cast(2 * " ~ relevant_count ~ " - num_ret as double)",
         "description": "set utility with trec_eval's default coefficients (1, -1, 0, 0): relevant retrieved - other "
             ~ "retrieved"},
        {"name": "11pt_avg", "column": "avg_11pt", "at_k": false, "reference": "trec_eval", "aggregation": "mean",
         "compared": true, "sql": "(" ~ iprec_sums | join(" + ") ~ ") / 11.0",
         "description": "mean of the 11 iprec_at_recall values"},
        {"name": "binG", "column": "bin_g", "at_k": false, "reference": "trec_eval", "aggregation": "mean",
         "compared": true, "sql": "case when num_rel > 0 then " ~ rank_sum(
            "case when is_relevant then 1.0 / " ~ log2("2 + position - relevant_so_far") ~ " else 0.0 end"
         ) ~ " / num_rel else 0.0 end",
         "description": "binary G: sum over retrieved relevant docs of 1 / log2(2 + non-relevant or unjudged docs above it), "
             ~ "/ R"},
        {"name": "G", "column": "g", "at_k": false, "reference": "trec_eval", "aggregation": "mean",
         "compared": true, "uses_relevance_level": false, "sql": "case when ideal_gain_sum > 0 then " ~ rank_sum(
            "case when gain > 0 then gain / " ~ log2(
                "2 + coalesce(ideal_gain_so_far, ideal_gain_sum + position - ideal_count) - gain_so_far") ~ " else 0.0 end"
         ) ~ " / ideal_gain_sum else 0.0 end",
         "description": "trec_eval's normalized gain G: sum over ranks i of gain_i / log2(2 + cost_i - gain at or above i), "
             ~ "cost_i the ideal gain of the top i (1 a rank past the ideal's end), / the ideal's total gain"},
        {"name": "ndcg", "column": "ndcg", "at_k": false, "reference": "trec_eval", "aggregation": "mean",
         "compared": true, "uses_relevance_level": false, "sql": ndcg,
         "instance": "nDCG(gains: gains = {})", "trec_eval_instance": "ndcg{gains}",
         "description": "NDCG over the whole ranking (no cutoff): linear gain, log2(rank + 1) discount, ideal over every "
             ~ "judged grade"},
        {"name": "ndcg_rel", "column": "ndcg_rel", "at_k": false, "reference": "trec_eval", "aggregation": "mean",
         "compared": true, "uses_relevance_level": false, "sql": "case when ideal_count > 0 then (" ~ rank_sum(
            "case when gain > 0 then dcg_so_far / coalesce(ideal_dcg_so_far, ideal_dcg) else 0.0 end")
            ~ " + (ideal_count - count(case when gain > 0 then 1 end)) * " ~ linear_dcg()
            ~ " / ideal_dcg) / ideal_count else 0.0 end",
         "description": "NDCG averaged over the docs with a positive grade: at each one retrieved, DCG at its rank / ideal "
             ~ "DCG there; DCG of the whole ranking / ideal DCG for each one not retrieved"},
        {"name": "Rndcg", "column": "rndcg", "at_k": false, "reference": "trec_eval", "aggregation": "mean",
         "compared": true, "uses_relevance_level": false,
         "sql": "case when num_rel = 0 or ideal_count = 0 then 0.0 else " ~ rank_sum(
            "case when gain > 0 then gain / " ~ log2("position + 1") ~ " * (coalesce(rndcg_weight, 0.0)"
            ~ " + case when num_ret > ideal_count + 1 then 1.0 / ideal_dcg else 0.0 end) else 0.0 end")
            ~ " / (ideal_levels + case when num_ret > ideal_count + 1 then 1 else 0 end) end",
         "description": "NDCG averaged over the R levels: at the rank where each grade of the ideal ranking ends (DCG at "
             ~ "min(that rank, num_ret)), and at num_ret if that is past the ideal's end + 1; 0 when R = 0"},
        {"name": "ndcg_cut", "column": "ndcg_cut", "at_k": true, "reference": "trec_eval", "aggregation": "mean",
         "compared": true, "uses_relevance_level": false, "sql": ndcg, "instance": "nDCG(gains: gains = {})@k",
         "trec_eval_instance": "ndcg_cut_{k}",
         "question_metrics_column": "ndcg", "run_metrics_column": "ndcg",
         "description": "DCG@k / ideal DCG@k: linear gain (the grade), log2(rank + 1) discount"},
        {"name": "map_cut", "column": "map_cut", "at_k": true, "reference": "trec_eval", "aggregation": "mean",
         "compared": true, "sql": ap, "instance": "AP(rel: level = 1)@k", "trec_eval_instance": "map_cut_{k}{rel}",
         "description": "average precision over the top k, still divided by num_rel"},
        {"name": "relative_P", "column": "relative_p", "at_k": true, "reference": "trec_eval", "aggregation": "mean",
         "compared": true, "sql": "case when num_rel > 0 then " ~ num_rel_ret ~ " / least(k, num_rel) else 0.0 end",
         "description": "relevant in the top k / min(k, num_rel): precision up to R, recall past it"},
        {"name": "success", "column": "success", "at_k": true, "reference": "trec_eval", "aggregation": "mean",
         "compared": true, "sql": "case when " ~ relevant_count ~ " > 0 then 1.0 else 0.0 end",
         "question_metrics_column": "hit", "run_metrics_column": "hit_rate",
         "description": "1 if a relevant document is in the top k, else 0 (hit@k)"},
        {"name": "set_P", "column": "set_p", "at_k": false, "reference": "trec_eval", "aggregation": "mean",
         "compared": true,
         "sql": "case when num_ret > 0 then " ~ set_precision ~ " else 0.0 end",
         "description": "precision of the whole retrieved set: num_rel_ret / num_ret"},
        {"name": "set_relative_P", "column": "set_relative_p", "at_k": false, "reference": "trec_eval",
         "aggregation": "mean", "compared": true,
         "sql": "case when num_ret > 0 and num_rel > 0 then " ~ num_rel_ret ~ " / least(num_ret, num_rel) else 0.0 end",
         "description": "num_rel_ret / min(num_ret, num_rel): set precision over the best possible for a set that size"},
        {"name": "set_recall", "column": "set_recall", "at_k": false, "reference": "trec_eval", "aggregation": "mean",
         "compared": true, "sql": recall,
         "description": "recall of the whole retrieved set: num_rel_ret / num_rel"},
        {"name": "set_map", "column": "set_map", "at_k": false, "reference": "trec_eval", "aggregation": "mean",
         "compared": true,
         "sql": "case when num_ret > 0 and num_rel > 0 then " ~ num_rel_ret ~ " * " ~ relevant_count
            ~ " / (cast(num_ret as double) * num_rel) else 0.0 end",
         "description": "unranked AP: num_rel_ret^2 / (num_ret num_rel), set_P times set_recall"},
        {"name": "set_F", "column": "set_f", "at_k": false, "reference": "trec_eval", "aggregation": "mean",
         "compared": true,
         "sql": "case when " ~ relevant_count ~ " = 0 then 0.0 else 2.0 * (" ~ set_precision ~ ") * (" ~ set_recall
            ~ ") / (" ~ set_precision ~ " + " ~ set_recall ~ ") end",
         "description": "F1 of set_P and set_recall: 2 P R / (P + R), 0 if nothing relevant was retrieved"},
        {"name": "num_nonrel_judged_ret", "column": "num_nonrel_judged_ret", "at_k": false, "reference": "trec_eval",
         "aggregation": "sum", "compared": false,
         "sql": "cast(count(case when relevance >= 0 and not is_relevant then 1 end) as double)",
         "description": "judged non-relevant documents retrieved (0 <= grade < relevance_level)"},
        {"name": "rbp", "column": "rbp", "at_k": false, "reference": "trec_eval", "aggregation": "mean",
         "compared": true, "uses_relevance_level": false, "sql": rank_sum("rbp_gain * rbp_weight"),
         "description": "rank-biased precision: (1 - p) times the sum over ranks i of gain_i p^(i - 1), p = rbp_persistence, "
             ~ "gain = grade (over the question's highest grade when that is above 1)"},
        {"name": "rbp_resid", "column": "rbp_resid", "at_k": false, "reference": "trec_eval", "aggregation": "mean",
         "compared": false, "uses_relevance_level": false,
         "sql": "case when num_ret > count(case when relevance >= 0 then 1 end) then 1.0 - " ~ rank_sum(
            "case when relevance >= 0 then rbp_weight else 0.0 end") ~ " else 0.0 end",
         "description": "rbp's residual: what rbp would gain if every unjudged retrieved document (and every one below the "
             ~ "ranking) had the highest grade, p^num_ret + (1 - p) times the sum over unjudged ranks i of p^(i - "
             ~ "1); 0 when every retrieved document is judged (as trec_eval)"},
        {"name": "unj", "column": "unj", "at_k": true, "reference": "trec_eval", "aggregation": "mean",
         "compared": false, "uses_relevance_level": false,
         "sql": "cast(least(k, num_ret) - count(case when relevance >= 0 then 1 end) as double) / k",
         "description": "share of the top k without a grade >= 0 (ranks past num_ret count as judged): trec_eval 10.0's red "
             ~ "flag for poor judgment coverage"},
        {"name": "Judged", "column": "judged", "at_k": true, "reference": "ir_measures", "aggregation": "mean",
         "compared": true, "uses_relevance_level": false,
         "sql": "case when least(k, num_ret) > 0 then cast(count(position) as double) / least(k, num_ret) else 0.0 end",
         "description": "share of the top min(k, num_ret) documents that have any judgment (any grade, negative included)"},
        {"name": "RR", "column": "rr", "at_k": true, "reference": "ir_measures", "aggregation": "mean",
         "compared": true, "sql": "coalesce(max(case when is_relevant then 1.0 / position end), 0.0)",
         "description": "reciprocal rank of the first relevant document in the top k, 0 if none there (MRR@k, MS MARCO's "
             ~ "MRR@10)"},
        {"name": "ERR", "column": "err", "at_k": true, "reference": "ir_measures", "aggregation": "mean",
         "compared": true, "uses_relevance_level": false, "sql": rank_sum("err_gain * err_continue / position"),
         "description": "expected reciprocal rank: sum over ranks i of R_i / i times the product of (1 - R_j) above it, R = "
             ~ "(2^grade - 1) / 2^err_max_grade"},
        {"name": "nDCG(dcg='exp-log2')", "column": "ndcg_exp", "at_k": true, "reference": "ir_measures",
         "aggregation": "mean", "compared": true, "uses_relevance_level": false,
         "sql": "case when ideal_exp_dcg > 0 then "
             ~ rank_sum("(power(2.0, gain) - 1.0) / " ~ log2("position + 1")) ~ " / ideal_exp_dcg else 0.0 end",
         "description": "NDCG@k with exponential gain 2^grade - 1 (gdeval's), log2(rank + 1) discount"},
        {"name": "RBP", "column": "rbp_graded", "at_k": false, "reference": "ir_measures", "aggregation": "mean",
         "compared": true, "uses_relevance_level": false, "by_default": false, "sql": rank_sum("gain * rbp_weight"),
         "instance": "RBP(p: probability = 0.8)",
         "description": "ir_measures' rank-biased precision (Moffat and Zobel 2008): (1 - p) times the sum over ranks i of "
             ~ "grade_i p^(i - 1), grades > 0 as they are"}
    ]) -%}
    {#- DCG and its ideal, nDCG's numerator and denominator: trec_eval 10.0's dcg and ideal_dcg (not in all_trec)
        over the whole ranking; at k, its dcg under -M k and IDCG over the ideal ranking's top k. -#}
    {%- set dcg = {"reference": "trec_eval", "aggregation": "mean", "compared": true, "uses_relevance_level": false,
                   "by_default": false, "sql": linear_dcg(),
                   "description": "DCG: sum over ranks i of gain_i / log2(i + 1), gain the grade (or the instance's map)"} -%}
    {%- set ideal = {"reference": "trec_eval", "aggregation": "mean", "compared": false, "uses_relevance_level": false,
                     "by_default": false, "sql": "ideal_dcg",
                     "description": "ideal DCG: the DCG of the question's judged documents by gain, highest first, whatever the run"} -%}
    {%- do measures.extend([
        dict(dcg, name="dcg", column="dcg", at_k=false, trec_eval_instance="dcg{gains}",
             **{"instance": "DCG(gains: gains = {})"}),
        dict(dcg, name="dcg_cut", column="dcg_cut", at_k=true,
             **{"instance": "DCG(gains: gains = {})@k"}),
        dict(ideal, name="ideal_dcg", column="ideal_dcg", at_k=false, trec_eval_instance="ideal_dcg{gains}",
             **{"instance": "IDCG(gains: gains = {})"}),
        dict(ideal, name="ideal_dcg_cut", column="ideal_dcg_cut", at_k=true,
             **{"instance": "IDCG(gains: gains = {})@k"})
    ]) -%}
    {{ return(checked_registry(measures)) }}
{%- endmacro %}

{#- What every measure's SQL may read: the question's constants and one of its judged retrieved documents (all
    null when it has none), from int_run_questions_scaffolded and int_judged_docs_retrieved. The models that
    compute the measures add ideal_dcg (and, with a cutoff, k and ideal_exp_dcg; without one, iprec_rule, the
    ideal ranking's length ideal_count, total gain ideal_gain_sum and number of grades ideal_levels, and per
    document judged_above, gain_so_far and dcg_so_far down to it, and the ideal ranking's ideal_gain_so_far,
    ideal_dcg_so_far and rndcg_weight at its rank: macros/run_question_measures.sql, measured_ctes). -#}
{% macro measure_input_columns(run_questions, judged_docs) -%}
        {{ run_questions }}.n_relevant as num_rel,
        {{ run_questions }}.n_ranked as num_ret,
        {{ run_questions }}.n_judged_nonrelevant as num_judged_nonrel,
        {%- for column in ['position', 'relevance', 'is_relevant', 'gain', 'err_gain', 'rbp_gain', 'rbp_weight',
                           'relevant_so_far', 'nonrelevant_above', 'err_continue'] %}
        {{ judged_docs }}.{{ column }}{% if not loop.last %},{% endif %}
        {%- endfor %}
{%- endmacro %}

{#- What an instance's SQL may read (a measure with parameters, computed per instance by
    macros/measure_instances.sql): the columns of measure_input_columns, with is_relevant, num_rel,
    num_judged_nonrel, relevant_so_far and nonrelevant_above at the instance's rel, gain by its gains and
    rbp_weight at its p; and k and ideal_dcg (by its gains, over its top k). -#}
{% macro instance_input_columns() -%}
    {{ return(['num_rel', 'num_ret', 'num_judged_nonrel', 'position', 'relevance', 'is_relevant', 'gain', 'err_gain',
               'rbp_gain', 'rbp_weight', 'relevant_so_far', 'nonrelevant_above', 'err_continue', 'k', 'ideal_dcg']) }}
{%- endmacro %}

{#- Every column a measure's SQL may read, with or without a cutoff (measured_ctes adds the ones past
    instance_input_columns). -#}
{% macro measure_inputs() -%}
    {{ return(instance_input_columns() + ['ideal_exp_dcg', 'iprec_rule', 'ideal_count', 'ideal_gain_sum',
        'ideal_levels', 'ideal_gain_so_far', 'ideal_dcg_so_far', 'rndcg_weight', 'judged_above', 'gain_so_far',
        'dcg_so_far']) }}
{%- endmacro %}

{#- The registry's schema (the keys in the comment above measure_registry): each key and the kind of its value; the
    optional ones marked. -#}
{% macro registry_schema() -%}
    {{ return({
        "name": "text", "column": "identifier", "at_k": "boolean", "sql": "text", "reference": ["trec_eval", "ir_measures"],
        "aggregation": ["mean", "sum", "geometric_mean"], "compared": "boolean", "description": "text",
        "question_metrics_column": "optional identifier", "run_metrics_column": "optional identifier",
        "uses_relevance_level": "optional boolean", "by_default": "optional boolean",
        "instance": "optional signature", "trec_eval_instance": "optional text"
    }) }}
{%- endmacro %}

{#- The rules a parameter's value may follow, each with what it accepts. -#}
{% macro parameter_rules() -%}
    {{ return({"level": "an integer >= 1", "probability": "a number strictly between 0 and 1",
               "gains": "a map {grade: gain} of integers >= 0, e.g. {0:0,1:1,2:3}"}) }}
{%- endmacro %}

{#- Why `text` (a parameter's value as written) breaks `rule`, or '' if it follows it. -#}
{% macro parameter_problem(rule, text) -%}
    {%- set re = modules.re -%}
    {%- if rule == 'level' -%}
        {%- set ok = re.fullmatch('[0-9]{1,9}', text) and (text | int) >= 1 -%}
    {%- elif rule == 'probability' -%}
        {%- set ok = re.fullmatch('(0?[.][0-9]+|0|1)(e-?[0-9]+)?', text) and 0 < (text | float) < 1 -%}
    {%- else -%}
        {%- set ok = re.fullmatch('[{]([0-9]{1,9}:[0-9]{1,9}(,[0-9]{1,9}:[0-9]{1,9})*)?[}]', text) -%}
    {%- endif -%}
    {{ return('' if ok else tojson(text) ~ ' is not ' ~ parameter_rules()[rule]) }}
{%- endmacro %}

{#- An entry's instance signature as {"family", "at_k", "parameters": [{"name", "rule", "default"}]}, or the reason
    it is not one (a string). -#}
{% macro parsed_signature(signature) -%}
    {%- set re = modules.re -%}
    {%- set whole = re.fullmatch('([A-Za-z][A-Za-z0-9_]*)[(](.+)[)](@k)?', signature) -%}
    {%- if not whole -%}
        {{ return(tojson(signature) ~ ' is not Name(parameter: rule = default, ...) or the same with @k') }}
    {%- endif -%}
    {%- set parameters = [] -%}
    {%- for part in whole.group(2).split(', ') -%}
        {%- set declared = re.fullmatch('([a-z][a-z_]*): ([a-z]+) = (.+)', part) -%}
        {%- if not declared -%}
            {{ return(tojson(part) ~ ' is not parameter: rule = default') }}
        {%- elif declared.group(2) not in parameter_rules() -%}
            {{ return('parameter ' ~ declared.group(1) ~ ': rule ' ~ tojson(declared.group(2)) ~ ' is not one of '
                      ~ (parameter_rules().keys() | join(', '))) }}
        {%- elif parameter_problem(declared.group(2), declared.group(3)) -%}
            {{ return('parameter ' ~ declared.group(1) ~ ': default ' ~ parameter_problem(declared.group(2), declared.group(3))) }}
        {%- endif -%}
        {%- do parameters.append({"name": declared.group(1), "rule": declared.group(2), "default": declared.group(3)}) -%}
    {%- endfor -%}
    {{ return({"family": whole.group(1), "at_k": whole.group(3) is not none, "parameters": parameters}) }}
{%- endmacro %}

{#- The registry, each entry checked against registry_schema(): a compiler error (which fails dbt's parse) naming
    the entry and the key for an unknown key, a missing one, a value of the wrong kind, a name given twice, or an
    instance whose signature is malformed, disagrees with at_k, is declared twice or reads an input instances
    lack. Each entry gains `inputs`: the columns of measure_inputs() its SQL reads. -#}
{% macro checked_registry(measures) -%}
    {%- set schema = registry_schema() -%}
    {%- set seen = [] -%}
    {%- set families = [] -%}
    {%- for measure in measures -%}
        {%- set entry = "measure registry (macros/measures.sql): entry " ~ loop.index ~ " (" ~ (measure.name or "no name") ~ ")" -%}
        {%- for key in measure if key not in schema -%}
            {%- do exceptions.raise_compiler_error(entry ~ ": unknown key '" ~ key ~ "' (its keys: " ~ (schema.keys() | join(", ")) ~ ")") -%}
        {%- endfor -%}
        {%- for key, kind in schema.items() -%}
            {%- set optional = kind is string and kind.startswith("optional ") -%}
            {%- set kind = kind[9:] if optional else kind -%}
            {%- if key not in measure -%}
                {%- if not optional -%}
                    {%- do exceptions.raise_compiler_error(entry ~ ": no key '" ~ key ~ "'") -%}
                {%- endif -%}
            {%- else -%}
                {%- set value = measure[key] -%}
                {%- if kind is not string -%}
                    {%- set ok = value in kind -%}
                {%- elif kind == "boolean" -%}
                    {%- set ok = value is sameas true or value is sameas false -%}
                {%- elif kind == "identifier" -%}
                    {%- set ok = value is string and modules.re.fullmatch("[a-z_][a-z0-9_]*", value) -%}
                {%- else -%}
                    {%- set ok = value is string and value | trim != "" -%}
                {%- endif -%}
                {%- if not ok -%}
                    {%- set wanted = {"boolean": "true or false", "identifier": "a lowercase SQL identifier",
                                      "text": "a non-empty string", "signature": "a non-empty string"} -%}
                    {%- do exceptions.raise_compiler_error(entry ~ ": key '" ~ key ~ "': " ~ tojson(value) ~ " is not "
                        ~ (wanted[kind] if kind is string else "one of " ~ (kind | join(", ")))) -%}
                {%- endif -%}
            {%- endif -%}
        {%- endfor -%}
        {%- set printed = (measure.name, measure.at_k) -%}
        {%- if printed in seen -%}
            {%- do exceptions.raise_compiler_error(entry ~ ": key 'name': " ~ measure.name ~ " is given twice") -%}
        {%- endif -%}
        {%- do seen.append(printed) -%}
        {%- set inputs = [] -%}
        {%- for column in measure_inputs() if modules.re.search('\\b' ~ column ~ '\\b', measure.sql) -%}
            {%- do inputs.append(column) -%}
        {%- endfor -%}
        {%- do measure.update({"inputs": inputs}) -%}
        {%- if measure.instance -%}
            {%- set signature = parsed_signature(measure.instance) -%}
            {%- if signature is string -%}
                {%- do exceptions.raise_compiler_error(entry ~ ": key 'instance': " ~ signature) -%}
            {%- elif signature.at_k != measure.at_k -%}
                {%- do exceptions.raise_compiler_error(entry ~ ": key 'instance': " ~ tojson(measure.instance) ~ " "
                    ~ ("lacks" if measure.at_k else "has") ~ " @k, but at_k is " ~ (measure.at_k | string | lower)) -%}
            {%- elif (signature.family, signature.at_k) in families -%}
                {%- do exceptions.raise_compiler_error(entry ~ ": key 'instance': " ~ signature.family
                    ~ ("@k" if signature.at_k else "") ~ " is another entry's instance too") -%}
            {%- endif -%}
            {%- for column in inputs if column not in instance_input_columns() -%}
                {%- do exceptions.raise_compiler_error(entry ~ ": key 'instance': its sql reads " ~ column
                    ~ ", which instances lack (they read " ~ (instance_input_columns() | join(", ")) ~ ")") -%}
            {%- endfor -%}
            {%- do families.append((signature.family, signature.at_k)) -%}
        {%- elif measure.by_default is sameas false or measure.trec_eval_instance -%}
            {%- do exceptions.raise_compiler_error(entry ~ ": key '" ~ ("by_default" if measure.by_default is sameas false
                else "trec_eval_instance") ~ "': only an entry with an instance may have it") -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(measures) }}
{%- endmacro %}

{#- The registry's measures computed for every collection (by_default), with or without a cutoff. -#}
{% macro measures_at_k(at_k) -%}
    {{ return(default_measures() | selectattr("at_k", "equalto", at_k) | list) }}
{%- endmacro %}

{#- The registry's measures computed for every collection: all but those with by_default false. -#}
{% macro default_measures() -%}
    {{ return(measure_registry() | rejectattr("by_default", "sameas", false) | list) }}
{%- endmacro %}

{#- A measure's printed name as a SQL expression (k is the cutoff column): P_5, iprec_at_recall_0.50, Judged@5. -#}
{% macro measure_name_sql(measure, k_column='k') -%}
    {%- if not measure.at_k -%}
        {{ sql_string(measure.name) }}
    {%- elif measure.reference == 'trec_eval' -%}
        {{ sql_string(measure.name ~ '_') }} || cast({{ k_column }} as string)
    {%- else -%}
        {{ sql_string(measure.name ~ '@') }} || cast({{ k_column }} as string)
    {%- endif -%}
{%- endmacro %}

{#- A Python string as a SQL string literal. -#}
{% macro sql_string(text) -%}
    '{{ text | replace("'", "''") }}'
{%- endmacro %}

{#- DCG over the question's documents the measure reads (its top k, or all): linear gain, log2 discount. -#}
{% macro linear_dcg() -%}
    {{ rank_sum('gain / ' ~ log2('position + 1')) }}
{%- endmacro %}

{#- A sum over one question's documents in rank order (position), 0 when it has none. -#}
{% macro rank_sum(expression) -%}
    coalesce({{ ordered_sum(expression, 'position') }}, 0.0)
{%- endmacro %}

{#- The ideal DCG of a question: its positive grades' gains by ideal_rank (int_ideal_rankings' order, highest
    grade first), linear (the grade) or exponential (2^grade - 1), over every ideal rank or the top `cutoff`. -#}
{% macro ideal_dcg(cutoff=none, exponential=false) -%}
    {%- set term = ('(power(2.0, relevance) - 1.0)' if exponential else 'relevance') ~ ' / ' ~ log2('ideal_rank + 1') -%}
    {{ ordered_sum(term if cutoff is none else 'case when ideal_rank <= ' ~ cutoff ~ ' then ' ~ term ~ ' else 0.0 end',
                   'ideal_rank') }}
{%- endmacro %}
