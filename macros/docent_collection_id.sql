{#- The collection id of the lesson's curated seeds (docs, golden_questions, golden_qrels). -#}
{% macro docent_collection_id() -%}
    cast('docent' as string)
{%- endmacro %}
