-- One row per (run, question): every measure of the registry without a cutoff (macros/measures.sql), over the
-- question's whole ranking, one column each (iprec_at_recall by the collection's iprec_rule), computed by
-- macros/run_question_measures.sql.

with runs_to_compute as (
    {{ runs_to_compute(given_runs=ref('int_run_questions_scaffolded')) }}
),

run_questions as (
    {{ rows_of_runs(ref('int_run_questions_scaffolded')) }}
),

judged_docs as (
    {{ rows_of_runs(ref('int_judged_docs_retrieved')) }}
),

settings as (
    select * from {{ ref('int_collection_evaluation_settings') }}
),

{{ measured_ctes('measured', 'run_questions', 'judged_docs', ref('int_ideal_rankings'), 'settings') }}
,

computed_rows as (
    select * from measured
)

select
    computed_rows.*,
    {{ computed_columns() }}
from computed_rows
inner join runs_to_compute
    on computed_rows.collection_id = runs_to_compute.collection_id
    and computed_rows.run_id = runs_to_compute.run_id
