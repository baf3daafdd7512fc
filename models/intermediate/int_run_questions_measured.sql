-- One row per (run, question) with k null: every measure of the registry without a cutoff, over the question's
-- whole ranking (iprec_at_recall by the collection's iprec_rule); and one row per (run, question, k) of the
-- collection's cutoffs: every measure with a cutoff, over its top k. One column per measure computed for every
-- collection (macros/measures.sql, default_measures),
-- null on the rows of the other kind; computed by macros/run_question_measures.sql.

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

-- each collection's cutoffs (its own k_values, else the var's)
cutoffs as (
    select collection_id, cast(value as integer) as k
    from {{ ref('int_collection_settings') }}
    where setting = 'k_values'
),

{{ measured_ctes('whole_ranking', 'run_questions', 'judged_docs', ref('int_ideal_rankings'), 'settings') }},

{{ measured_ctes('at_k', 'run_questions', 'judged_docs', ref('int_ideal_rankings'), cutoffs='cutoffs') }},

computed_rows as (
    {%- for at_k in [false, true] %}
    select
        {%- set rows = 'at_k' if at_k else 'whole_ranking' %}
        {{ rows }}.collection_id,
        {{ rows }}.run_id,
        {{ rows }}.question_id,
        {{ rows ~ '.k' if at_k else 'cast(null as integer) as k' }},
        {{ 'cast(null as integer) as first_relevant_rank' if at_k else 'whole_ranking.first_relevant_rank' }},
        {%- for column in ['relevant_retrieved_at_k', 'dcg', 'ideal_dcg'] %}
        {{ 'at_k.' ~ column if at_k else 'cast(null as ' ~ ('integer' if column == 'relevant_retrieved_at_k' else 'double') ~ ') as ' ~ column }},
        {%- endfor %}
        {%- for measure in default_measures() %}
        {{ rows ~ '.' ~ measure.column if measure.at_k == at_k else 'cast(null as double) as ' ~ measure.column }}
        {%- if not loop.last %},{% endif %}
        {%- endfor %}
    from {{ rows }}
    {%- if not at_k %}

    union all
    {% endif %}
    {%- endfor %}
)

select
    computed_rows.*,
    {{ computed_columns() }}
from computed_rows
inner join runs_to_compute
    on computed_rows.collection_id = runs_to_compute.collection_id
    and computed_rows.run_id = runs_to_compute.run_id
