-- One row per (collection, question, document) that a collection's judging pool asks people (or a judge) to
-- label: a document in a pool run's top pool_depth with no judgment yet (raw.judging_pools, `retrieval-metrics
-- pool`), its place in the question's queue by the pool's method, and what a labelling tool shows with it.

with pool_runs as (
    select * from {{ ref('stg_raw__judging_pools') }}
),

pool_rankings as (
    {{ rankings_as_measured('pool_runs', ['collection_id', 'run_id']) }}
),

unjudged as (
    select pool_rankings.*, pool_runs.pool_depth, pool_runs.pool_method, settings.rbp_persistence
    from pool_rankings
    inner join pool_runs
        on pool_rankings.collection_id = pool_runs.collection_id
        and pool_rankings.run_id = pool_runs.run_id
    inner join {{ ref('int_collection_evaluation_settings') }} as settings
        on pool_rankings.collection_id = settings.collection_id
    left join {{ ref('int_qrels_unioned') }} as judged
        on pool_rankings.collection_id = judged.collection_id
        and pool_rankings.question_id = judged.question_id
        and pool_rankings.doc_id = judged.doc_id
    where pool_rankings.rank <= pool_runs.pool_depth
        and judged.doc_id is null
),

-- each unjudged (question, doc) once, with every method's priority: the best rank and how many pool runs
-- retrieved it (depth), the sum of 1 / (60 + rank) (rrf), the sum of the runs' RBP weights (1 - p) p^(rank - 1)
-- at the collection's rbp_persistence (rbp), each added in rank order
candidates as (
    select
        collection_id,
        question_id,
        doc_id,
        max(pool_method) as pool_method,
        max(pool_depth) as pool_depth,
        min(rank) as best_rank,
        count(*) as n_pool_runs,
        {{ ordered_sum('cast(1 as double) / (60 + rank)', 'rank') }} as rrf_priority,
        {{ ordered_sum('(1 - rbp_persistence) * power(rbp_persistence, rank - 1)', 'rank') }} as rbp_priority,
        {{ ordered_string_agg("run_id || '@' || cast(rank as string)", ', ', 'rank, run_id') }} as retrieved_by
    from unjudged
    group by collection_id, question_id, doc_id
),

queued as (
    select
        candidates.*,
        case pool_method
            when 'depth' then cast(best_rank as double)
            when 'rrf' then rrf_priority
            else rbp_priority
        end as priority,
        -- a collection has one method: within a question, every row's case has the same branch
        row_number() over (
            partition by collection_id, question_id
            order by
                case when pool_method = 'depth' then best_rank end,
                case when pool_method = 'depth' then -n_pool_runs end,
                case when pool_method = 'rrf' then -rrf_priority when pool_method = 'rbp' then -rbp_priority end,
                best_rank,
                doc_id
        ) as queue_position
    from candidates
)

select
    queued.collection_id,
    queued.question_id,
    cast(queued.queue_position as integer) as queue_position,
    queued.doc_id,
    queued.pool_method,
    queued.pool_depth,
    cast(queued.priority as double) as priority,
    cast(queued.best_rank as integer) as best_rank,
    cast(queued.n_pool_runs as integer) as n_pool_runs,
    queued.retrieved_by,
    questions.question_text,
    documents.title as doc_title,
    substring(documents.doc_text, 1, 300) as doc_snippet
from queued
left join {{ ref('int_questions_unioned') }} as questions
    on queued.collection_id = questions.collection_id
    and queued.question_id = questions.question_id
left join {{ ref('int_documents_unioned') }} as documents
    on queued.collection_id = documents.collection_id
    and queued.doc_id = documents.doc_id
