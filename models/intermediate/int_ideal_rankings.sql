-- One row per judgment with a positive grade, placed where the ideal ranking would put it: highest grade first.
-- The ideal DCG of NDCG sums these grades' gains by ideal_rank. Positive grades, whatever the relevance_level:
-- trec_eval's NDCG gains are the grades themselves.

with qrels as (
    select * from {{ ref('int_qrels_unioned') }}
),

ranked as (
    {{ ideal_rankings_select('qrels') }}
)

select * from ranked
