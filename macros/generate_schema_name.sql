{#- Use a folder's custom schema name as is (staging, intermediate, seeds, expected) instead of dbt's
    default "<target schema>_<custom>", so marts land in `main` and BI tools see them first. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {{ custom_schema_name | trim if custom_schema_name is not none else target.schema }}
{%- endmacro %}
