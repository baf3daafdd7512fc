{#- Which questions run_metrics averages over, from the `averaging` var (see dbt_project.yml). -#}
{% macro averaging_mode() -%}
    {%- set mode = var('averaging') -%}
    {%- if mode not in ['all_questions', 'retrieved_only'] -%}
        {{ exceptions.raise_compiler_error("var averaging: " ~ mode ~ " is not one of all_questions, retrieved_only") }}
    {%- endif -%}
    {{ return(mode) }}
{%- endmacro %}
