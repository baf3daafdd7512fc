-- One row per (run, question of the run's collection), whether or not the run returned anything for the
-- question: a question the run missed entirely must still count (as 0) in the means.

with runs as (
    select * from {{ ref('stg_raw__runs') }}
),

questions as (
    select * from {{ ref('int_questions_judged') }}
),

retrieved_counts as (
    select
        collection_id,
        run_id,
        question_id,
        cast(count(*) as integer) as n_retrieved
    from {{ ref('stg_raw__rankings') }}
    group by collection_id, run_id, question_id
),

scaffolded as (
    select
        runs.collection_id,
        runs.run_id,
        questions.question_id,
        questions.n_judged,
        questions.n_relevant,
        coalesce(retrieved_counts.n_retrieved, 0) as n_retrieved
    from runs
    inner join questions
        on runs.collection_id = questions.collection_id
    left join retrieved_counts
        on runs.collection_id = retrieved_counts.collection_id
        and runs.run_id = retrieved_counts.run_id
        and questions.question_id = retrieved_counts.question_id
)

select * from scaffolded
