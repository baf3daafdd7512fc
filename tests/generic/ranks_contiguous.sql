{#- Within each group of `partition_by`, `rank_column` must run 1, 2, ..., n with no gap or repeat.
    Fails with one row per group that breaks this. -#}
{% test ranks_contiguous(model, partition_by, rank_column='rank') %}
select
    {{ partition_by | join(', ') }},
    count(*) as n_rows,
    count(distinct {{ rank_column }}) as n_distinct_ranks,
    min({{ rank_column }}) as min_rank,
    max({{ rank_column }}) as max_rank
from {{ model }}
group by {{ partition_by | join(', ') }}
having min({{ rank_column }}) <> 1
    or max({{ rank_column }}) <> count(*)
    or count(distinct {{ rank_column }}) <> count(*)
{% endtest %}
