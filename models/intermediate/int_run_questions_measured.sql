-- One row per (run, question): every measure of the registry without a cutoff (macros/measures.sql), over the
-- question's whole ranking, one column each (iprec_at_recall by the collection's iprec_rule).

with run_questions as (
    {{ rows_of_planned_runs(ref('int_run_questions_scaffolded')) }}
),

judged_docs as (
    {{ rows_of_planned_runs(ref('int_judged_docs_retrieved')) }}
),

settings as (
    select * from {{ ref('int_collection_evaluation_settings') }}
),

ideal as (
    select
        collection_id,
        question_id,
        {{ ideal_dcg() }} as ideal_dcg
    from {{ ref('int_ideal_rankings') }}
    group by collection_id, question_id
),

-- the question's constants beside each of its judged retrieved documents (one row of nulls if none):
-- what every measure's SQL in the registry may read
measure_inputs as (
    select
        run_questions.collection_id,
        run_questions.run_id,
        run_questions.question_id,
        coalesce(ideal.ideal_dcg, 0.0) as ideal_dcg,
        settings.iprec_rule,
        {{ measure_input_columns('run_questions', 'judged_docs') }}
    from run_questions
    inner join settings
        on run_questions.collection_id = settings.collection_id
    left join ideal
        on run_questions.collection_id = ideal.collection_id
        and run_questions.question_id = ideal.question_id
    left join judged_docs
        on run_questions.collection_id = judged_docs.collection_id
        and run_questions.run_id = judged_docs.run_id
        and run_questions.question_id = judged_docs.question_id
)

select
    collection_id,
    run_id,
    question_id,
    cast(min(case when is_relevant then position end) as integer) as first_relevant_rank,
    {%- for measure in measures_at_k(false) %}
    cast({{ measure.sql }} as double) as {{ measure.column }}{% if not loop.last %},{% endif %}
    {%- endfor %}
from measure_inputs
group by collection_id, run_id, question_id, num_rel, num_ret, num_judged_nonrel, ideal_dcg, iprec_rule
