-- One row per (run, question of the run's collection), whether or not the run returned anything for the
-- question: a question the run missed entirely must still count (as an empty ranking) in the means.
-- Under the collection's settings: n_retrieved leaves out the question's own id with ignore_identical_ids,
-- n_ranked counts the judged docs only with judged_docs_only, and is_averaged follows its averaging
-- (macros/run_question_measures.sql).

with runs as (
    {{ rows_of_planned_runs(ref('stg_raw__runs')) }}
),

questions as (
    select * from {{ ref('int_questions_judged') }}
),

settings as (
    select * from {{ ref('int_collection_evaluation_settings') }}
),

rankings as (
    {{ rows_of_planned_runs(ref('stg_raw__rankings')) }}
),

judged_docs as (
    {{ rows_of_planned_runs(ref('int_judged_docs_retrieved')) }}
),

{{ run_questions_ctes('scaffolded', 'runs', 'questions', 'rankings', 'judged_docs', 'settings') }}

select * from scaffolded
