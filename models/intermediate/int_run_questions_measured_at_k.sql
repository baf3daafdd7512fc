-- One row per (run, question, k): every measure of the registry with a cutoff (macros/measures.sql), over the
-- question's top k, one column each.

with run_questions as (
    {{ rows_of_planned_runs(ref('int_run_questions_scaffolded')) }}
),

judged_docs as (
    {{ rows_of_planned_runs(ref('int_judged_docs_retrieved')) }}
),

-- each collection's cutoffs (its own k_values, else the var's)
cutoffs as (
    select collection_id, cast(value as integer) as k
    from {{ ref('int_collection_settings') }}
    where setting = 'k_values'
),

-- the best top k possible: the positive grades, highest first
ideal_at_k as (
    select
        ideal.collection_id,
        ideal.question_id,
        cutoffs.k,
        {{ ideal_dcg('cutoffs.k') }} as ideal_dcg,
        {{ ideal_dcg('cutoffs.k', exponential=true) }} as ideal_exp_dcg
    from {{ ref('int_ideal_rankings') }} as ideal
    inner join cutoffs
        on ideal.collection_id = cutoffs.collection_id
    group by ideal.collection_id, ideal.question_id, cutoffs.k
),

-- the question's constants beside each of its judged documents in the top k (one row of nulls if none):
-- what every measure's SQL in the registry may read
measure_inputs as (
    select
        run_questions.collection_id,
        run_questions.run_id,
        run_questions.question_id,
        cutoffs.k,
        coalesce(ideal_at_k.ideal_dcg, 0.0) as ideal_dcg,
        coalesce(ideal_at_k.ideal_exp_dcg, 0.0) as ideal_exp_dcg,
        {{ measure_input_columns('run_questions', 'judged_docs') }}
    from run_questions
    inner join cutoffs
        on run_questions.collection_id = cutoffs.collection_id
    left join ideal_at_k
        on run_questions.collection_id = ideal_at_k.collection_id
        and run_questions.question_id = ideal_at_k.question_id
        and cutoffs.k = ideal_at_k.k
    left join judged_docs
        on run_questions.collection_id = judged_docs.collection_id
        and run_questions.run_id = judged_docs.run_id
        and run_questions.question_id = judged_docs.question_id
        and judged_docs.position <= cutoffs.k
)

select
    collection_id,
    run_id,
    question_id,
    k,
    cast(count(case when is_relevant then 1 end) as integer) as relevant_retrieved_at_k,
    cast({{ linear_dcg() }} as double) as dcg,
    cast(ideal_dcg as double) as ideal_dcg,
    {%- for measure in measures_at_k(true) %}
    cast({{ measure.sql }} as double) as {{ measure.column }}{% if not loop.last %},{% endif %}
    {%- endfor %}
from measure_inputs
group by collection_id, run_id, question_id, k, num_rel, num_ret, num_judged_nonrel, ideal_dcg, ideal_exp_dcg
