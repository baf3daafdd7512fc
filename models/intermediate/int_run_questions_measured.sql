-- One row per (run, question): every measure of the registry without a cutoff (macros/measures.sql), over the
-- question's whole ranking, one column each (iprec_at_recall by the collection's iprec_rule), computed by
-- macros/run_question_measures.sql.

with run_questions as (
    {{ rows_of_planned_runs(ref('int_run_questions_scaffolded')) }}
),

judged_docs as (
    {{ rows_of_planned_runs(ref('int_judged_docs_retrieved')) }}
),

settings as (
    select * from {{ ref('int_collection_evaluation_settings') }}
),

{{ measured_ctes('measured', 'run_questions', 'judged_docs', ref('int_ideal_rankings'), 'settings') }}

select * from measured
