-- One row per (collection, k, run): the run's run_metrics values, its rank among the collection's runs by
-- NDCG@k, its place in the scorecard and report (run_position) and the headline that orders it (NDCG at the
-- collection's largest k), when the run was written, its search latency where the run reports one (mean, p50, p95 over its questions), whether it
-- is one of its collection's baselines (int_collection_settings), and for every one of those measures its
-- difference from the collection's baseline (with several, the first by run id among its runs). Every measure
-- against every baseline, with significance: run_comparisons.

with run_metrics as (
    select * from {{ ref('run_metrics') }}
),

latencies as (
    select
        collection_id,
        run_id,
        avg(latency_ms) as latency_mean_ms,
        {{ percentile_cont('latency_ms', 0.5) }} as latency_p50_ms,
        {{ percentile_cont('latency_ms', 0.95) }} as latency_p95_ms
    from {{ ref('stg_raw__question_latencies') }}
    group by collection_id, run_id
),

-- each collection's baseline runs (its own baseline_run_id, else the var's), one row each
baselines as (
    select collection_id, value as baseline_run_id
    from {{ ref('int_collection_settings') }}
    where setting = 'baseline_run_id'
),

-- the baseline the differences are against: the collection's first by run id among its runs
baseline as (
    select run_metrics.*
    from run_metrics
    inner join (
        select baselines.collection_id, min(baselines.baseline_run_id) as baseline_run_id
        from baselines
        where exists (
            select 1 from run_metrics
            where run_metrics.collection_id = baselines.collection_id
                and run_metrics.run_id = baselines.baseline_run_id
        )
        group by baselines.collection_id
    ) as first_baselines
        on run_metrics.collection_id = first_baselines.collection_id
        and run_metrics.run_id = first_baselines.baseline_run_id
),

-- the collection's headline: NDCG at its largest k
headlines as (
    select
        collection_id,
        run_id,
        max_by(ndcg, k) as headline_ndcg
    from run_metrics
    group by collection_id, run_id
),

-- the baselines first (by run id), then best headline first, ties by run id
run_positions as (
    select
        headlines.collection_id,
        headlines.run_id,
        headlines.headline_ndcg,
        baselines.baseline_run_id is not null as is_baseline,
        cast(row_number() over (
            partition by headlines.collection_id
            order by
                case when baselines.baseline_run_id is not null then 0 else 1 end,
                case when baselines.baseline_run_id is not null then headlines.run_id end,
                headlines.headline_ndcg desc,
                headlines.run_id
        ) as integer) as run_position
    from headlines
    left join baselines
        on headlines.collection_id = baselines.collection_id
        and headlines.run_id = baselines.baseline_run_id
)

select
    run_metrics.collection_id,
    run_metrics.k,
    run_metrics.run_id,
    run_metrics.retriever,
    run_metrics.written_at,
    run_metrics.n_questions,
    {%- for measure in measure_registry() if measure.run_metrics_column %}
    run_metrics.{{ measure.run_metrics_column }},
    {%- endfor %}
    cast(rank() over (
        partition by run_metrics.collection_id, run_metrics.k
        order by run_metrics.ndcg desc
    ) as integer) as ndcg_rank,
    run_positions.run_position,
    cast(run_positions.headline_ndcg as double) as headline_ndcg,
    latencies.latency_mean_ms,
    latencies.latency_p50_ms,
    latencies.latency_p95_ms,
    run_positions.is_baseline,
    baseline.run_id as baseline_run_id,
    letter_groups.letters as ndcg_letters,
    {%- for measure in measure_registry() if measure.run_metrics_column %}
    run_metrics.{{ measure.run_metrics_column }} - baseline.{{ measure.run_metrics_column }}
        as {{ measure.run_metrics_column }}_vs_baseline{% if not loop.last %},{% endif %}
    {%- endfor %}
from run_metrics
left join baseline
    on run_metrics.collection_id = baseline.collection_id
    and run_metrics.k = baseline.k
inner join run_positions
    on run_metrics.collection_id = run_positions.collection_id
    and run_metrics.run_id = run_positions.run_id
left join latencies
    on run_metrics.collection_id = latencies.collection_id
    and run_metrics.run_id = latencies.run_id
left join {{ ref('run_letter_groups') }} as letter_groups
    on run_metrics.collection_id = letter_groups.collection_id
    and run_metrics.run_id = letter_groups.run_id
    and letter_groups.measure = 'ndcg_cut'
    and run_metrics.k = letter_groups.k
