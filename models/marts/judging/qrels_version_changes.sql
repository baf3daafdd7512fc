-- One row per (collection, pair of qrels versions, run, measure name): the run's value at both versions, for
-- every two versions of the collection's judgments a build measured the run on under its current settings
-- (run_means_by_qrels_version), with the run's place in the
-- leaderboard of the measure at each (value descending, then run id; among the runs measured at both).

with recorded as (
    select collection_id, run_id, run_version, qrels_version, settings_key, measure, k, measure_name, value
    from {{ ref('run_means_by_qrels_version') }}
),

-- the runs as they are now, under the settings they have now
current_runs as (
    select
        runs.collection_id,
        runs.run_id,
        runs.run_version,
        {{ qrels_history_settings_key('measures.evaluation_settings') }} as settings_key
    from {{ ref('int_run_fingerprints') }} as runs
    inner join (
        select distinct collection_id, run_id, evaluation_settings from {{ ref('run_measures') }}
    ) as measures
        on runs.collection_id = measures.collection_id
        and runs.run_id = measures.run_id
),

means as (
    select recorded.*
    from recorded
    inner join current_runs
        on recorded.collection_id = current_runs.collection_id
        and recorded.run_id = current_runs.run_id
        and recorded.run_version = current_runs.run_version
        and recorded.settings_key = current_runs.settings_key
),

paired as (
    select
        earlier.collection_id,
        earlier.qrels_version as from_qrels_version,
        later.qrels_version as to_qrels_version,
        earlier.run_id,
        earlier.measure,
        earlier.k,
        earlier.measure_name,
        earlier.value as value_from,
        later.value as value_to
    from means as earlier
    inner join means as later
        on earlier.collection_id = later.collection_id
        and earlier.run_id = later.run_id
        and earlier.measure_name = later.measure_name
        and earlier.qrels_version < later.qrels_version
)

select
    cast(collection_id as string) as collection_id,
    cast(from_qrels_version as integer) as from_qrels_version,
    cast(to_qrels_version as integer) as to_qrels_version,
    cast(run_id as string) as run_id,
    cast(measure as string) as measure,
    cast(k as integer) as k,
    cast(measure_name as string) as measure_name,
    cast(value_from as double) as value_from,
    cast(value_to as double) as value_to,
    cast(value_to - value_from as double) as value_change,
    cast(row_number() over (
        partition by collection_id, from_qrels_version, to_qrels_version, measure_name
        order by value_from desc, run_id
    ) as integer) as rank_from,
    cast(row_number() over (
        partition by collection_id, from_qrels_version, to_qrels_version, measure_name
        order by value_to desc, run_id
    ) as integer) as rank_to
from paired
