-- One row per (collection, run, qrels version, settings, measure name): the run's mean at every version of its
-- collection's judgments a build measured it on (run_measures holds the current version's only). Each build
-- writes the current version's rows again; the older versions' stay (full_refresh: false keeps them through
-- --full-refresh), until the run is written again or removed, or the version's judgments change under the same
-- number (the collection's base qrels imported again): then the post-hook forgets them. On Spark, a table of the
-- current version only.

{{ config(
    materialized='incremental' if target.type != 'spark' else 'table',
    incremental_strategy='delete+insert',
    unique_key=['collection_id', 'run_id', 'qrels_version', 'settings_key', 'judgments_hash'],
    full_refresh=false,
    on_schema_change='fail',
    post_hook="{{ forget_means_no_longer_valid() }}"
) }}

select
    measures.collection_id,
    measures.run_id,
    cast(runs.run_version as string) as run_version,
    cast({{ measured_qrels_version('measures.evaluation_settings') }} as integer) as qrels_version,
    cast(runs.judgments_hash as string) as judgments_hash,
    cast({{ qrels_history_settings_key('measures.evaluation_settings') }} as string) as settings_key,
    measures.measure,
    measures.k,
    measures.measure_name,
    measures.value,
    cast('{{ invocation_id }}' as string) as invocation_id,
    cast('{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S.%f") }}' as timestamp) as computed_at
from {{ ref('run_measures') }} as measures
inner join {{ ref('int_run_fingerprints') }} as runs
    on measures.collection_id = runs.collection_id
    and measures.run_id = runs.run_id
