{#- The default cutoffs k of every @k measure, from the `k_values` var, for a collection without its own
    (int_collection_settings).
    Accepts a YAML list ([1, 2, 3]), one integer, or a comma-separated string ("1,5,10"). -#}
{% macro cutoff_values() -%}
    {%- set raw = var('k_values') -%}
    {%- if raw is string -%}
        {%- set raw = raw.split(',') -%}
    {%- elif raw is number -%}
        {%- set raw = [raw] -%}
    {%- endif -%}
    {%- set ks = [] -%}
    {%- for value in raw -%}
        {%- set text = (value | string) | trim -%}
        {%- if not text.isdigit() or (text | int) < 1 or (text | int) > 2147483647 -%}
            {{ exceptions.raise_compiler_error("var k_values: " ~ (value | string) ~ " is not a positive integer (got " ~ (var('k_values') | string) ~ ")") }}
        {%- endif -%}
        {%- if (text | int) not in ks -%}
            {%- do ks.append(text | int) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if ks | length == 0 -%}
        {{ exceptions.raise_compiler_error("var k_values is empty: give at least one cutoff, e.g. [1, 2, 3]") }}
    {%- endif -%}
    {{ return(ks | sort) }}
{%- endmacro %}
