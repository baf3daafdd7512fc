{#- Every row's `columns` (a composite key, same names on both sides) must exist in `to`.
    Fails with the rows whose key has no match; rows with a null key part are not checked.
    `within` (optional, one of `columns`) limits the check to groups the parent has at least one row for:
    e.g. within collection_id, rankings are checked against documents only for collections that have a
    corpus (a TREC-only collection has judgments and runs but no documents). -#}
{% test composite_relationships(model, to, columns, within=none) %}
select {% for column in columns %}child.{{ column }}{% if not loop.last %}, {% endif %}{% endfor %}
from (select * from {{ model }}) as child  -- model may be a filtered subquery (a test's `where`)
left join {{ to }} as parent
    on {% for column in columns %}child.{{ column }} = parent.{{ column }}{% if not loop.last %} and {% endif %}{% endfor %}
where parent.{{ columns[0] }} is null
    {% for column in columns %}and child.{{ column }} is not null {% endfor %}
    {% if within %}and child.{{ within }} in (select {{ within }} from {{ to }}){% endif %}
{% endtest %}
