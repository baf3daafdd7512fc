-- One row per automatic judge's qrels version of a collection (`retrieval-metrics judge`): who judged, with
-- what, at what cost (latency), and how well it agrees with people on the pairs both graded
-- (int_judge_agreement), beside the gate's threshold (the setting min_judge_kappa) and whether it passes.
-- What the judge's labels do to the leaderboard: qrels_version_leaderboard_changes from this version to the
-- next one people corrected.

with versions as (
    select * from {{ ref('stg_raw__judgment_versions') }}
    where judge_kind = 'automatic'
),

latencies as (
    select
        collection_id,
        qrels_version,
        count(*) as n_judgments,
        {{ ordered_sum('latency_ms', 'question_id, doc_id') }} / count(*) as mean_latency_ms,
        {{ percentile_cont('latency_ms', 0.95) }} as p95_latency_ms,
        {{ ordered_sum('latency_ms', 'question_id, doc_id') }} as total_latency_ms
    from {{ ref('stg_raw__judgments') }}
    where judge_kind = 'automatic'
    group by collection_id, qrels_version
),

agreement as (
    select * from {{ ref('int_judge_agreement') }}
),

settings as (
    select
        collection_id,
        max(case when setting = 'relevance_level' then cast(value as integer) end) as relevance_level,
        max(case when setting = 'min_judge_kappa' and value <> 'none' then cast(value as double) end)
            as min_judge_kappa
    from {{ ref('int_collection_settings') }}
    group by collection_id
)

select
    cast(versions.collection_id as string) as collection_id,
    cast(versions.qrels_version as integer) as qrels_version,
    cast(versions.judge as string) as judge,
    cast(versions.judge_version as string) as judge_version,
    cast(versions.judge_params as string) as judge_params,
    cast(versions.created_at as timestamp) as created_at,
    cast(latencies.n_judgments as integer) as n_judgments,
    cast(latencies.mean_latency_ms as double) as mean_latency_ms,
    cast(latencies.p95_latency_ms as double) as p95_latency_ms,
    cast(latencies.total_latency_ms as double) as total_latency_ms,
    cast(settings.relevance_level as integer) as relevance_level,
    cast(coalesce(agreement.n_pairs, 0) as integer) as n_pairs,
    cast(coalesce(agreement.n_questions, 0) as integer) as n_questions,
    cast(agreement.kappa as double) as kappa,
    cast(agreement.kappa_ci_low as double) as kappa_ci_low,
    cast(agreement.kappa_ci_high as double) as kappa_ci_high,
    cast(agreement.weighted_kappa_linear as double) as weighted_kappa_linear,
    cast(agreement.weighted_kappa_linear_ci_low as double) as weighted_kappa_linear_ci_low,
    cast(agreement.weighted_kappa_linear_ci_high as double) as weighted_kappa_linear_ci_high,
    cast(agreement.weighted_kappa_quadratic as double) as weighted_kappa_quadratic,
    cast(agreement.weighted_kappa_quadratic_ci_low as double) as weighted_kappa_quadratic_ci_low,
    cast(agreement.weighted_kappa_quadratic_ci_high as double) as weighted_kappa_quadratic_ci_high,
    cast(settings.min_judge_kappa as double) as min_judge_kappa,
    cast(settings.min_judge_kappa is null or coalesce(agreement.kappa >= settings.min_judge_kappa, false) as boolean)
        as passes_gate
from versions
inner join settings
    on versions.collection_id = settings.collection_id
left join latencies
    on versions.collection_id = latencies.collection_id
    and versions.qrels_version = latencies.qrels_version
left join agreement
    on versions.collection_id = agreement.collection_id
    and versions.qrels_version = agreement.qrels_version
