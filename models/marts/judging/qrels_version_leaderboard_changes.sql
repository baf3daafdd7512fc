-- One row per (collection, pair of qrels versions, measure name), for every measure but the sums: whether the
-- new judgments reorder the runs' leaderboard of the measure (the runs of qrels_version_changes: measured at
-- both versions). Kendall's tau-b between the two versions' values (ties count as scipy.stats.kendalltau counts
-- them); tau_AP (Yilmaz, Aslam and Robertson 2008) of the earlier leaderboard against the later one, where a swap
-- near the top costs more; rank-biased overlap (Webber, Moffat and Zobel 2010, extrapolated, persistence the
-- var rbo_persistence) of the two leaderboards; and the pairs of runs whose order the later version reverses.
-- tau_AP and RBO read the leaderboards as ranked lists: value descending, ties by run id
-- (macros/leaderboard_correlations.sql).

with changes as (
    select changes.*
    from {{ ref('qrels_version_changes') }} as changes
    inner join {{ ref('measure_catalog') }} as catalog
        on changes.measure = catalog.measure
    where catalog.aggregation <> 'sum'
),

measures as (
    select distinct collection_id, from_qrels_version, to_qrels_version, measure, k, measure_name
    from changes
),

{{ leaderboard_correlations_ctes('correlations', 'changes',
    ['collection_id', 'from_qrels_version', 'to_qrels_version', 'measure_name']) }}

select
    cast(measures.collection_id as string) as collection_id,
    cast(measures.from_qrels_version as integer) as from_qrels_version,
    cast(measures.to_qrels_version as integer) as to_qrels_version,
    cast(measures.measure as string) as measure,
    cast(measures.k as integer) as k,
    cast(measures.measure_name as string) as measure_name,
    cast(correlations.n_runs as integer) as n_runs,
    cast(correlations.kendall_tau as double) as kendall_tau,
    cast(correlations.tau_ap as double) as tau_ap,
    cast(correlations.rbo as double) as rbo,
    cast(correlations.n_swapped_pairs as integer) as n_swapped_pairs,
    cast(correlations.swapped_pairs as string) as swapped_pairs
from measures
inner join correlations
    on measures.collection_id = correlations.collection_id
    and measures.from_qrels_version = correlations.from_qrels_version
    and measures.to_qrels_version = correlations.to_qrels_version
    and measures.measure_name = correlations.measure_name
