{#- The CTEs that compare two leaderboards of the same runs, one comparison per group of `keys`: `leaderboards`
    holds one row per (keys, run) with the run's value and place in each (value_from, value_to, rank_from,
    rank_to; places 1, 2, ... by value descending, ties by run id). The last CTE, `name`, has one row per group:
    n_runs; Kendall's tau-b between the two leaderboards' values (ties count as scipy.stats.kendalltau counts
    them); tau_AP (Yilmaz, Aslam and Robertson 2008) of the `from` leaderboard against the `to` one, where a swap
    near the top costs more; rank-biased overlap (Webber, Moffat and Zobel 2010, extrapolated, persistence the
    var rbo_persistence); n_swapped_pairs, and with `with_swaps` the pairs of runs the `to` leaderboard reverses
    (swapped_pairs). Each statistic stays in its range by construction, and two identical leaderboards give
    exactly 1: tau-b is one division of the integer C - D by the square root of an integer product, which is
    never below |C - D| (C / sqrt(C * C) = 1 exactly); tau_AP adds shares of at most 1 each; RBO is 1 minus the
    rank-weighted share of runs missing from the other top d, a sum of terms >= 0 that is exactly 0 when the
    orders agree. qrels_version_leaderboard_changes (two qrels versions) and judge_leaderboard_agreement (a
    judge's labels and people's, resample by resample) read it. -#}
{% macro leaderboard_correlations_ctes(name, leaderboards, keys, with_swaps=true) -%}
    {%- set group_keys = keys | join(', ') -%}
    {#- as a double: Spark reads a literal 0.9 as a decimal, and divides decimals to 6 digits -#}
    {%- set rbo_persistence = 'cast(' ~ setting('rbo_persistence') ~ ' as double)' -%}
{{ name }}_sizes as (
    select {{ group_keys }}, count(*) as n_runs
    from {{ leaderboards }}
    group by {{ group_keys }}
),

-- every two runs of a leaderboard (first by run id first): concordant, discordant or tied in each
{{ name }}_run_pairs as (
    select
        {%- for key in keys %}
        first_run.{{ key }},
        {%- endfor %}
        first_run.run_id as first_run_id,
        second_run.run_id as second_run_id,
        sign(first_run.value_from - second_run.value_from) as order_from,
        sign(first_run.value_to - second_run.value_to) as order_to
    from {{ leaderboards }} as first_run
    inner join {{ leaderboards }} as second_run
        on {% for key in keys %}first_run.{{ key }} = second_run.{{ key }}
        and {% endfor %}first_run.run_id < second_run.run_id
),

{{ name }}_kendall as (
    select
        {{ group_keys }},
        count(*) as n_pairs,
        sum(case when order_from * order_to > 0 then 1 else 0 end) as n_concordant,
        sum(case when order_from * order_to < 0 then 1 else 0 end) as n_discordant,
        sum(case when order_from = 0 then 1 else 0 end) as n_tied_from,
        sum(case when order_to = 0 then 1 else 0 end) as n_tied_to
    from {{ name }}_run_pairs
    group by {{ group_keys }}
),
{%- if with_swaps %}

{{ name }}_swaps as (
    select
        {{ group_keys }},
        {{ ordered_string_agg(
            "concat(ahead_before, ' > ', ahead_after, ' became ', ahead_after, ' > ', ahead_before)", '; ',
            'ahead_before, ahead_after') }} as swapped_pairs
    from (
        select
            {{ group_keys }},
            case when order_from > 0 then first_run_id else second_run_id end as ahead_before,
            case when order_from > 0 then second_run_id else first_run_id end as ahead_after
        from {{ name }}_run_pairs
        where order_from * order_to < 0
    ) as swapped
    group by {{ group_keys }}
),
{%- endif %}

-- tau_AP: for the run at place i >= 2 of the `from` leaderboard, the share of the i - 1 runs above it there that
-- the `to` leaderboard also puts above it
{{ name }}_places_above as (
    select
        {%- for key in keys %}
        item.{{ key }},
        {%- endfor %}
        item.rank_from,
        cast(sum(case when above.rank_to < item.rank_to then 1 else 0 end) as double) / (item.rank_from - 1)
            as share_kept_above
    from {{ leaderboards }} as item
    inner join {{ leaderboards }} as above
        on {% for key in keys %}item.{{ key }} = above.{{ key }}
        and {% endfor %}above.rank_from < item.rank_from
    group by {% for key in keys %}item.{{ key }}, {% endfor %}item.rank_from
),

{{ name }}_tau_ap as (
    select {{ group_keys }}, {{ ordered_sum('share_kept_above', 'rank_from') }} as share_sum
    from {{ name }}_places_above
    group by {{ group_keys }}
),

-- RBO: the share of either leaderboard's top d missing from the other's, for every depth d = 1 .. n_runs
-- (1 - X_d / d, X_d the runs in both: one division of integers, exactly 0 where the two tops agree)
{{ name }}_depth_overlaps as (
    select
        {%- for key in keys %}
        depth.{{ key }},
        {%- endfor %}
        depth.rank_from as depth,
        max(sizes.n_runs) as max_depth,
        cast(depth.rank_from - count(member.run_id) as double) / depth.rank_from as disagreement
    from {{ leaderboards }} as depth
    inner join {{ name }}_sizes as sizes
        on {% for key in keys %}depth.{{ key }} = sizes.{{ key }}{% if not loop.last %}
        and {% endif %}{% endfor %}
    left join {{ leaderboards }} as member
        on {% for key in keys %}depth.{{ key }} = member.{{ key }}
        and {% endfor %}member.rank_from <= depth.rank_from
        and member.rank_to <= depth.rank_from
    group by {% for key in keys %}depth.{{ key }}, {% endfor %}depth.rank_from
),

{{ name }}_rbo as (
    select
        {{ group_keys }},
        max(case when depth = max_depth then disagreement end) as disagreement_at_end,
        max(max_depth) as max_depth,
        {{ ordered_sum('disagreement * power(' ~ rbo_persistence ~ ', depth)', 'depth') }} as weighted_disagreement
    from {{ name }}_depth_overlaps
    group by {{ group_keys }}
),

{{ name }} as (
    select
        {%- for key in keys %}
        sizes.{{ key }},
        {%- endfor %}
        sizes.n_runs,
        -- (C - D) / sqrt((P - T_from) (P - T_to)): the product an exact integer, so its rounded square root is
        -- never below min(P - T_from, P - T_to) >= |C - D|
        case
            when (kendall.n_pairs - kendall.n_tied_from) * (kendall.n_pairs - kendall.n_tied_to) > 0
                then cast(kendall.n_concordant - kendall.n_discordant as double)
                    / sqrt(cast((kendall.n_pairs - kendall.n_tied_from) * (kendall.n_pairs - kendall.n_tied_to)
                        as double))
        end as kendall_tau,
        case when sizes.n_runs > 1 then 2.0 * tau_ap.share_sum / (sizes.n_runs - 1) - 1.0 end as tau_ap,
        -- RBO_EXT = (X_N / N) p^N + (1 - p) / p * sum_d (X_d / d) p^d = 1 - (that sum with 1 - X_d / d in
        -- place of X_d / d): a geometric series that is exactly 1 taken out, 1 exactly when the orders agree
        1.0 - rbo.disagreement_at_end * power({{ rbo_persistence }}, rbo.max_depth)
            - (1.0 - {{ rbo_persistence }}) / {{ rbo_persistence }} * rbo.weighted_disagreement as rbo,
        coalesce(kendall.n_discordant, 0) as n_swapped_pairs
        {%- if with_swaps %},
        swaps.swapped_pairs
        {%- endif %}
    from {{ name }}_sizes as sizes
    inner join {{ name }}_rbo as rbo
        on {% for key in keys %}sizes.{{ key }} = rbo.{{ key }}{% if not loop.last %}
        and {% endif %}{% endfor %}
    left join {{ name }}_kendall as kendall
        on {% for key in keys %}sizes.{{ key }} = kendall.{{ key }}{% if not loop.last %}
        and {% endif %}{% endfor %}
    left join {{ name }}_tau_ap as tau_ap
        on {% for key in keys %}sizes.{{ key }} = tau_ap.{{ key }}{% if not loop.last %}
        and {% endif %}{% endfor %}
    {%- if with_swaps %}
    left join {{ name }}_swaps as swaps
        on {% for key in keys %}sizes.{{ key }} = swaps.{{ key }}{% if not loop.last %}
        and {% endif %}{% endfor %}
    {%- endif %}
)
{%- endmacro %}
