-- One row per run of a collection that has a judging pool: Judged@pool_depth of the run now, and once every
-- (question, doc) of judging_queue is judged, over the questions the run returned documents for. The pool's own
-- runs reach 1; the collection's other runs show how much the pool fills their top pool_depth too.

with pools as (
    select collection_id, max(pool_depth) as pool_depth, max(pool_method) as pool_method
    from {{ ref('stg_raw__judging_pools') }}
    group by collection_id
),

-- every run's rankings in a pooled collection, as the measures see them
rankings as (
    {{ rankings_as_measured('pools', ['collection_id']) }}
),

top_of_pool_depth as (
    select
        rankings.collection_id,
        rankings.run_id,
        rankings.question_id,
        case when judged.doc_id is not null then 1 else 0 end as is_judged,
        case when judged.doc_id is not null or queue.doc_id is not null then 1 else 0 end as is_judged_after
    from rankings
    inner join pools
        on rankings.collection_id = pools.collection_id
    left join {{ ref('int_qrels_unioned') }} as judged
        on rankings.collection_id = judged.collection_id
        and rankings.question_id = judged.question_id
        and rankings.doc_id = judged.doc_id
    left join {{ ref('judging_queue') }} as queue
        on rankings.collection_id = queue.collection_id
        and rankings.question_id = queue.question_id
        and rankings.doc_id = queue.doc_id
    where rankings.rank <= pools.pool_depth
),

per_question as (
    select
        collection_id,
        run_id,
        question_id,
        count(*) as n_top,
        sum(is_judged) as n_judged,
        sum(is_judged_after) as n_judged_after
    from top_of_pool_depth
    group by collection_id, run_id, question_id
),

-- the run's questions by the size of their top (pool_depth, or fewer where the run returned fewer), with integer
-- sums of their judged documents
per_top_size as (
    select
        collection_id,
        run_id,
        n_top,
        count(*) as n_questions,
        sum(n_judged) as n_judged,
        sum(n_judged_after) as n_judged_after,
        sum(n_top - n_judged) as n_unjudged_now,
        sum(n_top - n_judged_after) as n_unjudged_after
    from per_question
    group by collection_id, run_id, n_top
),

-- the mean of the questions' shares: where every top has the same size n (the usual case), one division of two
-- integers, judged / (n * questions), exact (24 of 48 is 0.5); else the sum over the sizes n of judged / n, in
-- size order, over the questions. Each part is at most its questions' count, so the mean is never above 1.
per_run as (
    select
        collection_id,
        run_id,
        sum(n_questions) as n_questions,
        {%- for column in ['judged', 'judged_after'] %}
        case
            when count(*) = 1 then cast(sum(n_{{ column }}) as double) / sum(n_top * n_questions)
            else {{ ordered_sum('cast(n_' ~ column ~ ' as double) / n_top', 'n_top') }} / sum(n_questions)
        end as {{ 'judged_now' if column == 'judged' else column }},
        {%- endfor %}
        sum(n_unjudged_now) as n_unjudged_now,
        sum(n_unjudged_after) as n_unjudged_after
    from per_top_size
    group by collection_id, run_id
)

select
    per_run.collection_id,
    per_run.run_id,
    pools.pool_depth,
    pools.pool_method,
    case when pool_runs.run_id is not null then true else false end as is_pool_run,
    cast(per_run.n_questions as integer) as n_questions,
    cast(per_run.judged_now as double) as judged_now,
    cast(per_run.judged_after as double) as judged_after,
    cast(per_run.n_unjudged_now as integer) as n_unjudged_now,
    cast(per_run.n_unjudged_after as integer) as n_unjudged_after
from per_run
inner join pools
    on per_run.collection_id = pools.collection_id
left join {{ ref('stg_raw__judging_pools') }} as pool_runs
    on per_run.collection_id = pool_runs.collection_id
    and per_run.run_id = pool_runs.run_id
