{#- Fails with one row per combination of `combination` columns that occurs more than once. -#}
{% test unique_combination_of_columns(model, combination) %}
select
    {{ combination | join(', ') }},
    count(*) as n_rows
from {{ model }}
group by {{ combination | join(', ') }}
having count(*) > 1
{% endtest %}
