-- One row per (run, question of the run's collection), whether or not the run returned anything for the
-- question: a question the run missed entirely must still count (as an empty ranking) in the means.
-- Under the collection's settings: n_retrieved leaves out the question's own id with ignore_identical_ids,
-- n_ranked counts the judged docs only with judged_docs_only, and is_averaged follows its averaging
-- (macros/run_question_measures.sql).

with runs_to_compute as (
    {{ runs_to_compute(given_runs=ref('stg_raw__runs')) }}
),

runs as (
    {{ rows_of_runs(ref('stg_raw__runs')) }}
),

questions as (
    select * from {{ ref('int_questions_judged') }}
),

settings as (
    select * from {{ ref('int_collection_evaluation_settings') }}
),

rankings as (
    {{ rows_of_runs(ref('stg_raw__rankings')) }}
),

judged_docs as (
    {{ rows_of_runs(ref('int_judged_docs_retrieved')) }}
),

{{ run_questions_ctes('scaffolded', 'runs', 'questions', 'rankings', 'judged_docs', 'settings') }}
,

computed_rows as (
    select * from scaffolded
)

select
    computed_rows.*,
    {{ computed_columns() }}
from computed_rows
inner join runs_to_compute
    on computed_rows.collection_id = runs_to_compute.collection_id
    and computed_rows.run_id = runs_to_compute.run_id
