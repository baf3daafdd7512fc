-- One row per relevant judgment (grade >= 1), placed where the ideal ranking would put it: highest grade
-- first. The ideal DCG of NDCG@k sums these grades over ideal_rank <= k.

with qrels as (
    select * from {{ ref('int_qrels_unioned') }}
),

ranked as (
    select
        collection_id,
        question_id,
        doc_id,
        relevance,
        cast(row_number() over (
            partition by collection_id, question_id
            order by relevance desc, doc_id
        ) as integer) as ideal_rank
    from qrels
    where relevance >= 1
)

select * from ranked
