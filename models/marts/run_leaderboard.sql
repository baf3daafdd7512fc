-- One row per (collection, k, run): the run's run_metrics values, its rank among the collection's runs by
-- NDCG@k, and for every one of those measures its difference from the baseline run (var baseline_run_id) of
-- the same collection. Every measure against the baseline, with significance: run_comparisons.

with run_metrics as (
    select * from {{ ref('run_metrics') }}
),

baseline as (
    select * from run_metrics
    where run_id = '{{ var("baseline_run_id") }}'
)

select
    run_metrics.collection_id,
    run_metrics.k,
    run_metrics.run_id,
    run_metrics.retriever,
    run_metrics.n_questions,
    {%- for measure in measure_registry() if measure.run_metrics_column %}
    run_metrics.{{ measure.run_metrics_column }},
    {%- endfor %}
    cast(rank() over (
        partition by run_metrics.collection_id, run_metrics.k
        order by run_metrics.ndcg desc
    ) as integer) as ndcg_rank,
    baseline.run_id as baseline_run_id,
    {%- for measure in measure_registry() if measure.run_metrics_column %}
    run_metrics.{{ measure.run_metrics_column }} - baseline.{{ measure.run_metrics_column }}
        as {{ measure.run_metrics_column }}_vs_baseline{% if not loop.last %},{% endif %}
    {%- endfor %}
from run_metrics
left join baseline
    on run_metrics.collection_id = baseline.collection_id
    and run_metrics.k = baseline.k
