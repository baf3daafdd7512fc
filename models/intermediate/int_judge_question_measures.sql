-- One row per (collection, automatic judge's qrels version, labels, run, question, measure) for every measure of
-- the registry that the comparison marts compare: a run's value for the question when the only judgments are
-- the pairs the judge and people both graded (int_judge_agreement_pairs), graded as the judge graded them
-- (labels 'judge') or as people did ('people'). The runs' own steps and measures' SQL (macros/judged_docs.sql,
-- macros/run_question_measures.sql, macros/measures.sql), under the collection's settings; the questions are
-- those with a pair both graded, and every run of the collection is measured on each (nothing retrieved: an
-- empty ranking). What judge_leaderboard_agreement ranks the runs by, twice.

{{ config(materialized="table") }}

{%- set label_keys = ['qrels_version', 'labels'] %}

with pairs as (
    select * from {{ ref('int_judge_agreement_pairs') }}
),

labelled as (
    select collection_id, qrels_version, 'judge' as labels, question_id, doc_id, judge_grade as relevance
    from pairs
    union all
    select collection_id, qrels_version, 'people' as labels, question_id, doc_id, people_grade as relevance
    from pairs
),

settings as (
    select * from {{ ref('int_collection_evaluation_settings') }}
),

judged_questions as (
    select distinct collection_id, question_id from pairs
),

rankings as (
    select rankings.*
    from {{ ref('stg_raw__rankings') }} as rankings
    inner join judged_questions
        on rankings.collection_id = judged_questions.collection_id
        and rankings.question_id = judged_questions.question_id
),

{{ judged_docs_ctes('judged_docs', 'rankings', 'labelled', 'settings', label_keys) }},

label_counts as (
    {{ judgment_counts_select('labelled', 'settings', label_keys) }}
),

-- every run of the collection on every question with a pair both graded, under each labels: the runs' own
-- scaffold (int_run_questions_scaffolded), of which only the questions the collection's averaging averages
{{ run_questions_ctes('scaffolded', ref('stg_raw__runs'), 'label_counts', 'rankings', 'judged_docs', 'settings',
                      label_keys) }},

run_questions as (
    select * from scaffolded where is_averaged
),

-- the ideal ranking of each labels' positive grades (int_ideal_rankings)
ideal_rankings as (
    {{ ideal_rankings_select('labelled', label_keys) }}
),

cutoffs as (
    select collection_id, cast(value as integer) as k
    from {{ ref('int_collection_settings') }}
    where setting = 'k_values'
),

{{ measured_ctes('measured', 'run_questions', 'judged_docs', 'ideal_rankings', 'settings', keys=label_keys) }},

{{ measured_ctes('measured_at_k', 'run_questions', 'judged_docs', 'ideal_rankings', cutoffs='cutoffs',
                 keys=label_keys) }},

{% for at_k_measures in [false, true] %}
{{ 'at_k_measures' if at_k_measures else 'whole_ranking_measures' }} as (
    {%- for measure in measures_at_k(at_k_measures) if measure.compared %}
    select {{ sql_string(measure.name) }} as measure
    {%- if not loop.last %} union all{% endif %}
    {%- endfor %}
),
{% endfor %}

-- one row per measure (a CASE over the columns: each table read once, as question_measures does)
unpivoted as (
    select
        measured.collection_id,
        measured.qrels_version,
        measured.labels,
        measured.run_id,
        measured.question_id,
        whole_ranking_measures.measure,
        cast(null as integer) as k,
        whole_ranking_measures.measure as measure_name,
        case whole_ranking_measures.measure
            {%- for measure in measures_at_k(false) if measure.compared %}
            when {{ sql_string(measure.name) }} then measured.{{ measure.column }}
            {%- endfor %}
        end as value
    from measured
    cross join whole_ranking_measures

    union all

    select
        measured_at_k.collection_id,
        measured_at_k.qrels_version,
        measured_at_k.labels,
        measured_at_k.run_id,
        measured_at_k.question_id,
        at_k_measures.measure,
        measured_at_k.k,
        case at_k_measures.measure
            {%- for measure in measures_at_k(true) if measure.compared %}
            when {{ sql_string(measure.name) }} then {{ measure_name_sql(measure, 'measured_at_k.k') }}
            {%- endfor %}
        end as measure_name,
        case at_k_measures.measure
            {%- for measure in measures_at_k(true) if measure.compared %}
            when {{ sql_string(measure.name) }} then measured_at_k.{{ measure.column }}
            {%- endfor %}
        end as value
    from measured_at_k
    cross join at_k_measures
)

select
    cast(collection_id as string) as collection_id,
    cast(qrels_version as integer) as qrels_version,
    cast(labels as string) as labels,
    cast(run_id as string) as run_id,
    cast(question_id as string) as question_id,
    cast(measure as string) as measure,
    cast(k as integer) as k,
    cast(measure_name as string) as measure_name,
    cast(value as double) as value
from unpivoted
