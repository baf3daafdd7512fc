-- One row per (run, question of the run's collection), whether or not the run returned anything for the
-- question: a question the run missed entirely must still count (as an empty ranking) in the means.
-- Under the collection's settings: n_retrieved leaves out the question's own id with ignore_identical_ids,
-- n_ranked counts the judged docs only with judged_docs_only, and is_averaged follows its averaging.

with runs as (
    {{ rows_of_planned_runs(ref('stg_raw__runs')) }}
),

questions as (
    select * from {{ ref('int_questions_judged') }}
),

settings as (
    select * from {{ ref('int_collection_evaluation_settings') }}
),

retrieved_counts as (
    select
        rankings.collection_id,
        rankings.run_id,
        rankings.question_id,
        cast(count(*) as integer) as n_retrieved
    from ({{ rows_of_planned_runs(ref('stg_raw__rankings')) }}) as rankings
    inner join settings
        on rankings.collection_id = settings.collection_id
    where not (settings.ignore_identical_ids and rankings.doc_id = rankings.question_id)
    group by rankings.collection_id, rankings.run_id, rankings.question_id
),

judged_counts as (
    select
        collection_id,
        run_id,
        question_id,
        cast(count(*) as integer) as n_judged_retrieved
    from ({{ rows_of_planned_runs(ref('int_judged_docs_retrieved')) }}) as judged_docs
    group by collection_id, run_id, question_id
),

scaffolded as (
    select
        runs.collection_id,
        runs.run_id,
        questions.question_id,
        questions.n_judged,
        questions.n_relevant,
        questions.n_judged_nonrelevant,
        coalesce(retrieved_counts.n_retrieved, 0) as n_retrieved,
        case when settings.judged_docs_only
            then coalesce(judged_counts.n_judged_retrieved, 0)
            else coalesce(retrieved_counts.n_retrieved, 0)
        end as n_ranked,
        cast(
            case when settings.averaging = 'retrieved_only'
                then retrieved_counts.n_retrieved is not null and questions.n_judged > 0
                else true
            end
        as boolean) as is_averaged
    from runs
    inner join questions
        on runs.collection_id = questions.collection_id
    inner join settings
        on runs.collection_id = settings.collection_id
    left join retrieved_counts
        on runs.collection_id = retrieved_counts.collection_id
        and runs.run_id = retrieved_counts.run_id
        and questions.question_id = retrieved_counts.question_id
    left join judged_counts
        on runs.collection_id = judged_counts.collection_id
        and runs.run_id = judged_counts.run_id
        and questions.question_id = judged_counts.question_id
)

select * from scaffolded
