-- One row per (collection, run, question, k): every measure of one question's ranking at cutoff k.
-- Formulas: see the doc blocks in _marts__docs.md; each matches the trec_eval measure named there.

with run_questions as (
    select * from {{ ref('int_run_questions_scaffolded') }}
),

relevant_retrieved as (
    select * from {{ ref('int_relevant_docs_retrieved') }}
),

relevant_judgments as (
    select * from {{ ref('int_relevant_judgments_ranked') }}
),

cutoffs as (
    select k from {{ cutoffs() }} as cutoff_values
),

-- k-independent measures, over the whole ranking
ranking_summary as (
    select
        relevant_retrieved.collection_id,
        relevant_retrieved.run_id,
        relevant_retrieved.question_id,
        min(relevant_retrieved.rank) as first_relevant_rank,
        {{ ordered_sum(
            'cast(relevant_retrieved.n_relevant_up_to_rank as double) / relevant_retrieved.rank',
            'relevant_retrieved.rank'
        ) }} as precision_sum_at_relevant_ranks,
        sum(case when relevant_retrieved.rank <= run_questions.n_relevant then 1 else 0 end) as relevant_in_top_r
    from relevant_retrieved
    inner join run_questions
        on relevant_retrieved.collection_id = run_questions.collection_id
        and relevant_retrieved.run_id = run_questions.run_id
        and relevant_retrieved.question_id = run_questions.question_id
    group by relevant_retrieved.collection_id, relevant_retrieved.run_id, relevant_retrieved.question_id
),

-- what the run put in its top k
retrieved_at_k as (
    select
        relevant_retrieved.collection_id,
        relevant_retrieved.run_id,
        relevant_retrieved.question_id,
        cutoffs.k,
        sum(case when relevant_retrieved.rank <= cutoffs.k then 1 else 0 end) as relevant_retrieved_at_k,
        {{ ordered_sum(
            'case when relevant_retrieved.rank <= cutoffs.k then relevant_retrieved.relevance / '
            ~ log2('relevant_retrieved.rank + 1') ~ ' else 0.0 end',
            'relevant_retrieved.rank'
        ) }} as dcg
    from relevant_retrieved
    cross join cutoffs
    group by relevant_retrieved.collection_id, relevant_retrieved.run_id, relevant_retrieved.question_id, cutoffs.k
),

-- the best top k possible: the judged grades, highest first
ideal_at_k as (
    select
        relevant_judgments.collection_id,
        relevant_judgments.question_id,
        cutoffs.k,
        {{ ordered_sum(
            'case when relevant_judgments.ideal_rank <= cutoffs.k then relevant_judgments.relevance / '
            ~ log2('relevant_judgments.ideal_rank + 1') ~ ' else 0.0 end',
            'relevant_judgments.ideal_rank'
        ) }} as ideal_dcg
    from relevant_judgments
    cross join cutoffs
    group by relevant_judgments.collection_id, relevant_judgments.question_id, cutoffs.k
),

joined as (
    select
        run_questions.collection_id,
        run_questions.run_id,
        run_questions.question_id,
        cutoffs.k,
        run_questions.n_judged,
        run_questions.n_relevant,
        run_questions.n_retrieved,
        coalesce(retrieved_at_k.relevant_retrieved_at_k, 0) as relevant_retrieved_at_k,
        ranking_summary.first_relevant_rank,
        coalesce(ranking_summary.precision_sum_at_relevant_ranks, 0.0) as precision_sum_at_relevant_ranks,
        coalesce(ranking_summary.relevant_in_top_r, 0) as relevant_in_top_r,
        coalesce(retrieved_at_k.dcg, 0.0) as dcg,
        coalesce(ideal_at_k.ideal_dcg, 0.0) as ideal_dcg
    from run_questions
    cross join cutoffs
    left join ranking_summary
        on run_questions.collection_id = ranking_summary.collection_id
        and run_questions.run_id = ranking_summary.run_id
        and run_questions.question_id = ranking_summary.question_id
    left join retrieved_at_k
        on run_questions.collection_id = retrieved_at_k.collection_id
        and run_questions.run_id = retrieved_at_k.run_id
        and run_questions.question_id = retrieved_at_k.question_id
        and cutoffs.k = retrieved_at_k.k
    left join ideal_at_k
        on run_questions.collection_id = ideal_at_k.collection_id
        and run_questions.question_id = ideal_at_k.question_id
        and cutoffs.k = ideal_at_k.k
),

measured as (
    select
        collection_id,
        run_id,
        question_id,
        k,
        cast(n_judged as integer) as n_judged,
        cast(n_relevant as integer) as n_relevant,
        cast(n_retrieved as integer) as n_retrieved,
        cast(relevant_retrieved_at_k as integer) as relevant_retrieved_at_k,
        cast(first_relevant_rank as integer) as first_relevant_rank,
        cast(case when first_relevant_rank is null then 0.0 else 1.0 / first_relevant_rank end as double)
            as reciprocal_rank,
        cast(case when relevant_retrieved_at_k > 0 then 1.0 else 0.0 end as double) as hit,
        cast(case when n_relevant > 0 then cast(relevant_retrieved_at_k as double) / n_relevant else 0.0 end as double)
            as recall,
        cast(cast(relevant_retrieved_at_k as double) / k as double) as precision,
        cast(dcg as double) as dcg,
        cast(ideal_dcg as double) as ideal_dcg,
        cast(case when ideal_dcg > 0 then dcg / ideal_dcg else 0.0 end as double) as ndcg,
        cast(case when n_relevant > 0 then precision_sum_at_relevant_ranks / n_relevant else 0.0 end as double)
            as average_precision,
        cast(case when n_relevant > 0 then cast(relevant_in_top_r as double) / n_relevant else 0.0 end as double)
            as r_precision,
        cast(
            {% if averaging_mode() == 'retrieved_only' -%}
                n_retrieved > 0 and n_judged > 0
            {%- else -%}
                true
            {%- endif %}
        as boolean) as is_averaged
    from joined
)

select
    collection_id,
    run_id,
    question_id,
    k,
    n_judged,
    n_relevant,
    n_retrieved,
    relevant_retrieved_at_k,
    first_relevant_rank,
    reciprocal_rank,
    hit,
    recall,
    precision,
    dcg,
    ideal_dcg,
    ndcg,
    average_precision,
    r_precision,
    is_averaged
from measured
