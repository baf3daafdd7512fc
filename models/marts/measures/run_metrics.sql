-- One row per (collection, run, k): the run's value of every measure that has a column of its own here
-- (run_metrics_column in macros/measures.sql), wide; taken from run_measures (every measure, long), so both
-- carry the same bits. Measures of the whole ranking repeat at every k. written_at: when the run's rows were
-- written (raw.runs.created_at, UTC), to follow a retriever across the runs of its versions.

with run_measures as (
    select * from {{ ref('run_measures') }}
),

runs as (
    select * from {{ ref('stg_raw__runs') }}
),

at_k as (
    select
        collection_id,
        run_id,
        k,
        max(n_questions) as n_questions,
        {%- for measure in measures_at_k(true) if measure.run_metrics_column %}
        max(case when measure = {{ sql_string(measure.name) }} then value end) as {{ measure.run_metrics_column }}
        {%- if not loop.last %},{% endif %}
        {%- endfor %}
    from run_measures
    where k is not null
    group by collection_id, run_id, k
),

whole_ranking as (
    select
        collection_id,
        run_id,
        {%- for measure in measures_at_k(false) if measure.run_metrics_column %}
        max(case when measure = {{ sql_string(measure.name) }} then value end) as {{ measure.run_metrics_column }}
        {%- if not loop.last %},{% endif %}
        {%- endfor %}
    from run_measures
    where k is null
    group by collection_id, run_id
)

select
    at_k.collection_id,
    at_k.run_id,
    runs.retriever,
    runs.parameters,
    runs.ir_metadata,
    runs.created_at as written_at,
    at_k.k,
    cast(at_k.n_questions as integer) as n_questions,
    {%- for measure in measure_registry() if measure.run_metrics_column %}
    cast({{ 'at_k' if measure.at_k else 'whole_ranking' }}.{{ measure.run_metrics_column }} as double)
        as {{ measure.run_metrics_column }}{% if not loop.last %},{% endif %}
    {%- endfor %}
from at_k
inner join whole_ranking
    on at_k.collection_id = whole_ranking.collection_id
    and at_k.run_id = whole_ranking.run_id
inner join runs
    on at_k.collection_id = runs.collection_id
    and at_k.run_id = runs.run_id
