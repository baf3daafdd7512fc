-- One row per (collection, run, question, measure[, k]): every measure of the registry (macros/measures.sql),
-- named as its reference prints it (P_10, ndcg_cut_10, bpref, iprec_at_recall_0.50, Judged@10), long, so that
-- a BI tool charts any measure with one query. k is null for the measures of the whole ranking. Beside them, the
-- measure instances each collection lists (int_measure_instances), named as ir_measures prints them (RBP(p=0.5),
-- AP(rel=2), nDCG(gains={2:3})@10) and computed from the judged documents with their parameters, and the measures
-- users define for it (int_user_measures: SQL ones computed here, Python ones in int_user_measure_values).

with runs_to_compute as (
    {{ runs_to_compute(given_runs=ref('int_run_questions_measured')) }}
),

measured as (
    {{ rows_of_runs(ref('int_run_questions_measured')) }}
),

whole_ranking as (
    select * from measured where k is null
),

at_k as (
    select * from measured where k is not null
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

{{ instance_measured_ctes('instance_values', 'run_questions', 'judged_docs', ref('int_qrels_unioned'),
                          ref('int_measure_instances'), 'settings', ref('int_user_measures'),
                          user_measure_definitions(ref('int_collection_settings'))) }},

{% for at_k_measures in [false, true] %}
{{ 'at_k_measures' if at_k_measures else 'whole_ranking_measures' }} as (
    {%- for measure in measures_at_k(at_k_measures) %}
    select {{ sql_string(measure.name) }} as measure
    {%- if not loop.last %} union all{% endif %}
    {%- endfor %}
),
{% endfor %}

unpivoted as (
    select
        whole_ranking.collection_id,
        whole_ranking.run_id,
        whole_ranking.question_id,
        whole_ranking_measures.measure,
        cast(null as integer) as k,
        whole_ranking_measures.measure as measure_name,
        case whole_ranking_measures.measure
            {%- for measure in measures_at_k(false) %}
            when {{ sql_string(measure.name) }} then whole_ranking.{{ measure.column }}
            {%- endfor %}
        end as value
    from whole_ranking
    cross join whole_ranking_measures

    union all

    select
        at_k.collection_id,
        at_k.run_id,
        at_k.question_id,
        at_k_measures.measure,
        at_k.k,
        case at_k_measures.measure
            {%- for measure in measures_at_k(true) %}
            when {{ sql_string(measure.name) }} then {{ measure_name_sql(measure, 'at_k.k') }}
            {%- endfor %}
        end as measure_name,
        case at_k_measures.measure
            {%- for measure in measures_at_k(true) %}
            when {{ sql_string(measure.name) }} then at_k.{{ measure.column }}
            {%- endfor %}
        end as value
    from at_k
    cross join at_k_measures

    union all

    select collection_id, run_id, question_id, measure, k, measure_name, value
    from instance_values

    union all

    -- the Python measures users define (int_user_measure_values)
    select collection_id, run_id, question_id, measure_name as measure, k, measure_name, value
    from {{ ref('int_user_measure_values') }}
),

computed_rows as (
    select
        unpivoted.collection_id,
        unpivoted.run_id,
        unpivoted.question_id,
        cast(unpivoted.measure as string) as measure,
        cast(unpivoted.k as integer) as k,
        cast(unpivoted.measure_name as string) as measure_name,
        cast(unpivoted.value as double) as value,
        run_questions.is_averaged
    from unpivoted
    inner join run_questions
        on unpivoted.collection_id = run_questions.collection_id
        and unpivoted.run_id = run_questions.run_id
        and unpivoted.question_id = run_questions.question_id
)

select
    computed_rows.*,
    {{ computed_columns() }}
from computed_rows
inner join runs_to_compute
    on computed_rows.collection_id = runs_to_compute.collection_id
    and computed_rows.run_id = runs_to_compute.run_id
