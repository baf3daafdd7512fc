{#- Within each group of `partition_by`, `rank_column` must run 1, 2, ..., n with no gap or repeat.
    Fails with one row per group that breaks this. Written as two plain aggregations (rows per rank, then
    per group) rather than a count(distinct): those spill to disk, so a 100M-row ranking fits in a capped
    memory budget. -#}
{% test ranks_contiguous(model, partition_by, rank_column='rank') %}
with rows_per_rank as (
    select {{ partition_by | join(', ') }}, {{ rank_column }}, count(*) as n_rows
    from {{ model }}
    group by {{ partition_by | join(', ') }}, {{ rank_column }}
)

select
    {{ partition_by | join(', ') }},
    sum(n_rows) as n_rows,
    count(*) as n_distinct_ranks,
    min({{ rank_column }}) as min_rank,
    max({{ rank_column }}) as max_rank
from rows_per_rank
group by {{ partition_by | join(', ') }}
having min({{ rank_column }}) <> 1
    or max({{ rank_column }}) <> count(*)
    or sum(n_rows) <> count(*)
{% endtest %}
