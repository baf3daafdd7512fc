{#- Within each group of `partition_by`, `rank_column` must run 1, 2, ..., n with no gap or repeat.
    Fails with one row per group that breaks this. n ranks are exactly 1..n when the smallest is 1, the
    largest is n and none repeats: the bounds are one small aggregation per group, and repeated ranks are
    found through a hash (see repeated_keys), so a 100M-row ranking is checked in a capped memory budget
    without a count(distinct). -#}
{% test ranks_contiguous(model, partition_by, rank_column='rank') %}
{%- set group_key = partition_by | join(', ') -%}
with group_bounds as (
    select
        {{ group_key }},
        count(*) as n_rows,
        min({{ rank_column }}) as min_rank,
        max({{ rank_column }}) as max_rank
    from {{ model }}
    group by {{ group_key }}
),

groups_with_repeated_ranks as (
    select distinct {{ group_key }}
    from ({{ repeated_keys(model, partition_by + [rank_column]) }}) as repeated_ranks
)

select group_bounds.*
from group_bounds
where group_bounds.min_rank <> 1
    or group_bounds.max_rank <> group_bounds.n_rows
    or exists (
        select 1 from groups_with_repeated_ranks as repeats
        where {% for column in partition_by %}repeats.{{ column }} = group_bounds.{{ column }}{% if not loop.last %} and {% endif %}{% endfor %}
    )
{% endtest %}
