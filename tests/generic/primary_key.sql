{#- `columns` together are the model's key: never null, and unique together. Fails with one row per key
    value that has a null part or occurs more than once. One pass over the model, however many columns. -#}
{% test primary_key(model, columns) %}
select
    {{ columns | join(', ') }},
    count(*) as n_rows
from {{ model }}
group by {{ columns | join(', ') }}
having count(*) > 1
    {% for column in columns %}or {{ column }} is null {% endfor %}
{% endtest %}
