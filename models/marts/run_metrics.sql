-- One row per (collection, run, k): the mean of every measure over the run's averaged questions.
-- averaging = all_questions (default): every question of the collection, a miss counting 0 (trec_eval -c).
-- averaging = retrieved_only: only questions that are judged and that the run returned anything for.

with question_metrics as (
    select * from {{ ref('question_metrics') }}
),

runs as (
    select * from {{ ref('stg_raw__runs') }}
),

averaged as (
    select
        collection_id,
        run_id,
        k,
        count(*) as n_questions,
        {{ ordered_sum('hit', 'question_id') }} as hit_sum,
        {{ ordered_sum('recall', 'question_id') }} as recall_sum,
        {{ ordered_sum('precision', 'question_id') }} as precision_sum,
        {{ ordered_sum('ndcg', 'question_id') }} as ndcg_sum,
        {{ ordered_sum('reciprocal_rank', 'question_id') }} as reciprocal_rank_sum,
        {{ ordered_sum('average_precision', 'question_id') }} as average_precision_sum,
        {{ ordered_sum('r_precision', 'question_id') }} as r_precision_sum
    from question_metrics
    where is_averaged
    group by collection_id, run_id, k
)

select
    averaged.collection_id,
    averaged.run_id,
    runs.retriever,
    averaged.k,
    cast(averaged.n_questions as integer) as n_questions,
    cast(averaged.hit_sum / averaged.n_questions as double) as hit_rate,
    cast(averaged.recall_sum / averaged.n_questions as double) as recall,
    cast(averaged.precision_sum / averaged.n_questions as double) as precision,
    cast(averaged.ndcg_sum / averaged.n_questions as double) as ndcg,
    cast(averaged.reciprocal_rank_sum / averaged.n_questions as double) as mrr,
    cast(averaged.average_precision_sum / averaged.n_questions as double) as map,
    cast(averaged.r_precision_sum / averaged.n_questions as double) as r_precision
from averaged
inner join runs
    on averaged.collection_id = runs.collection_id
    and averaged.run_id = runs.run_id
