-- One row per (collection, pair of qrels versions, measure name), for every measure but the sums: whether the
-- new judgments reorder the runs' leaderboard of the measure (the runs of qrels_version_changes: measured at
-- both versions). Kendall's tau-b between the two versions' values (ties count as scipy.stats.kendalltau counts
-- them); tau_AP (Yilmaz, Aslam and Robertson 2008) of the earlier leaderboard against the later one, where a swap
-- near the top costs more; rank-biased overlap (Webber, Moffat and Zobel 2010, extrapolated, persistence the
-- var rbo_persistence) of the two leaderboards; and the pairs of runs whose order the later version reverses.
-- tau_AP and RBO read the leaderboards as ranked lists: value descending, ties by run id.

with changes as (
    select changes.*
    from {{ ref('qrels_version_changes') }} as changes
    inner join {{ ref('measure_catalog') }} as catalog
        on changes.measure = catalog.measure
    where catalog.aggregation <> 'sum'
),

leaderboards as (
    select
        collection_id,
        from_qrels_version,
        to_qrels_version,
        measure,
        k,
        measure_name,
        count(*) as n_runs
    from changes
    group by collection_id, from_qrels_version, to_qrels_version, measure, k, measure_name
),

-- every two runs of a leaderboard (first by run id first): concordant, discordant or tied in each version
run_pairs as (
    select
        first_run.collection_id,
        first_run.from_qrels_version,
        first_run.to_qrels_version,
        first_run.measure_name,
        first_run.run_id as first_run_id,
        second_run.run_id as second_run_id,
        sign(first_run.value_from - second_run.value_from) as order_from,
        sign(first_run.value_to - second_run.value_to) as order_to
    from changes as first_run
    inner join changes as second_run
        on first_run.collection_id = second_run.collection_id
        and first_run.from_qrels_version = second_run.from_qrels_version
        and first_run.to_qrels_version = second_run.to_qrels_version
        and first_run.measure_name = second_run.measure_name
        and first_run.run_id < second_run.run_id
),

kendall as (
    select
        collection_id,
        from_qrels_version,
        to_qrels_version,
        measure_name,
        count(*) as n_pairs,
        sum(case when order_from * order_to > 0 then 1 else 0 end) as n_concordant,
        sum(case when order_from * order_to < 0 then 1 else 0 end) as n_discordant,
        sum(case when order_from = 0 then 1 else 0 end) as n_tied_from,
        sum(case when order_to = 0 then 1 else 0 end) as n_tied_to
    from run_pairs
    group by collection_id, from_qrels_version, to_qrels_version, measure_name
),

swaps as (
    select
        collection_id,
        from_qrels_version,
        to_qrels_version,
        measure_name,
        {{ ordered_string_agg(
            "concat(ahead_before, ' > ', ahead_after, ' became ', ahead_after, ' > ', ahead_before)", '; ',
            'ahead_before, ahead_after') }} as swapped_pairs
    from (
        select
            collection_id,
            from_qrels_version,
            to_qrels_version,
            measure_name,
            case when order_from > 0 then first_run_id else second_run_id end as ahead_before,
            case when order_from > 0 then second_run_id else first_run_id end as ahead_after
        from run_pairs
        where order_from * order_to < 0
    ) as swapped
    group by collection_id, from_qrels_version, to_qrels_version, measure_name
),

-- tau_AP: for the run at place i >= 2 of the earlier leaderboard, the share of the i - 1 runs above it there that
-- the later leaderboard also puts above it
places_above as (
    select
        item.collection_id,
        item.from_qrels_version,
        item.to_qrels_version,
        item.measure_name,
        item.rank_from,
        cast(sum(case when above.rank_to < item.rank_to then 1 else 0 end) as double) / (item.rank_from - 1)
            as share_kept_above
    from changes as item
    inner join changes as above
        on item.collection_id = above.collection_id
        and item.from_qrels_version = above.from_qrels_version
        and item.to_qrels_version = above.to_qrels_version
        and item.measure_name = above.measure_name
        and above.rank_from < item.rank_from
    group by item.collection_id, item.from_qrels_version, item.to_qrels_version, item.measure_name, item.rank_from
),

tau_ap as (
    select
        collection_id,
        from_qrels_version,
        to_qrels_version,
        measure_name,
        {{ ordered_sum('share_kept_above', 'rank_from') }} as share_sum
    from places_above
    group by collection_id, from_qrels_version, to_qrels_version, measure_name
),

-- RBO: the overlap of the two leaderboards' top d, for every depth d = 1 .. n_runs
depth_overlaps as (
    select
        depth.collection_id,
        depth.from_qrels_version,
        depth.to_qrels_version,
        depth.measure_name,
        depth.rank_from as depth,
        cast(count(member.run_id) as double) / depth.rank_from as agreement
    from changes as depth
    left join changes as member
        on depth.collection_id = member.collection_id
        and depth.from_qrels_version = member.from_qrels_version
        and depth.to_qrels_version = member.to_qrels_version
        and depth.measure_name = member.measure_name
        and member.rank_from <= depth.rank_from
        and member.rank_to <= depth.rank_from
    group by depth.collection_id, depth.from_qrels_version, depth.to_qrels_version, depth.measure_name,
        depth.rank_from
),

rbo as (
    select
        collection_id,
        from_qrels_version,
        to_qrels_version,
        measure_name,
        max(case when depth = max_depth then agreement end) as agreement_at_end,
        max(max_depth) as max_depth,
        {{ ordered_sum('agreement * power(' ~ rbo_persistence() ~ ', depth)', 'depth') }} as weighted_sum
    from (
        select *, max(depth) over (
            partition by collection_id, from_qrels_version, to_qrels_version, measure_name
        ) as max_depth
        from depth_overlaps
    ) as depths
    group by collection_id, from_qrels_version, to_qrels_version, measure_name
)

select
    cast(leaderboards.collection_id as string) as collection_id,
    cast(leaderboards.from_qrels_version as integer) as from_qrels_version,
    cast(leaderboards.to_qrels_version as integer) as to_qrels_version,
    cast(leaderboards.measure as string) as measure,
    cast(leaderboards.k as integer) as k,
    cast(leaderboards.measure_name as string) as measure_name,
    cast(leaderboards.n_runs as integer) as n_runs,
    cast(case
        when (kendall.n_pairs - kendall.n_tied_from) * (kendall.n_pairs - kendall.n_tied_to) > 0
            then (kendall.n_concordant - kendall.n_discordant)
                / sqrt(cast(kendall.n_pairs - kendall.n_tied_from as double))
                / sqrt(cast(kendall.n_pairs - kendall.n_tied_to as double))
    end as double) as kendall_tau,
    cast(case when leaderboards.n_runs > 1
        then 2.0 / (leaderboards.n_runs - 1) * tau_ap.share_sum - 1.0
    end as double) as tau_ap,
    cast(rbo.agreement_at_end * power({{ rbo_persistence() }}, rbo.max_depth)
        + (1.0 - {{ rbo_persistence() }}) / {{ rbo_persistence() }} * rbo.weighted_sum as double) as rbo,
    cast(coalesce(kendall.n_discordant, 0) as integer) as n_swapped_pairs,
    cast(swaps.swapped_pairs as string) as swapped_pairs
from leaderboards
inner join rbo
    on leaderboards.collection_id = rbo.collection_id
    and leaderboards.from_qrels_version = rbo.from_qrels_version
    and leaderboards.to_qrels_version = rbo.to_qrels_version
    and leaderboards.measure_name = rbo.measure_name
left join kendall
    on leaderboards.collection_id = kendall.collection_id
    and leaderboards.from_qrels_version = kendall.from_qrels_version
    and leaderboards.to_qrels_version = kendall.to_qrels_version
    and leaderboards.measure_name = kendall.measure_name
left join tau_ap
    on leaderboards.collection_id = tau_ap.collection_id
    and leaderboards.from_qrels_version = tau_ap.from_qrels_version
    and leaderboards.to_qrels_version = tau_ap.to_qrels_version
    and leaderboards.measure_name = tau_ap.measure_name
left join swaps
    on leaderboards.collection_id = swaps.collection_id
    and leaderboards.from_qrels_version = swaps.from_qrels_version
    and leaderboards.to_qrels_version = swaps.to_qrels_version
    and leaderboards.measure_name = swaps.measure_name
