{#- Differences this small are float noise, not a win or a loss. -#}
{% macro tie_tolerance() -%}
    1e-12
{%- endmacro %}
