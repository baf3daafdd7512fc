{#- Measures users define (retrieval_metrics/user_measures.py), stored by a collection's setting user_measures one
    JSON row each: {"name", "kind" (sql or python), "description", "file", and "sql", or "source" and
    "function"}. Read when dbt executes; nothing while it parses. -#}

{#- Every collection's user measures, from `settings` (int_collection_settings): a list of the stored dicts, each
    with its collection_id, by collection and name. -#}
{% macro user_measure_definitions(settings) -%}
    {%- set found = [] -%}
    {%- if execute -%}
        {%- set stored = run_query("select collection_id, value from " ~ settings
            ~ " where setting = 'user_measures' and value != 'none' order by collection_id, value") -%}
        {%- for collection_id, text in stored.rows -%}
            {%- set definition = fromjson(text) -%}
            {%- do definition.update({"collection_id": collection_id}) -%}
            {%- do found.append(definition) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(found) }}
{%- endmacro %}

{#- The user measures as a select of one row per (collection_id, measure_name): its kind, description and
    definition (its SQL, or its function's name). -#}
{% macro user_measures_select(settings) -%}
    {%- for definition in user_measure_definitions(settings) %}
    select
        cast({{ sql_string(definition.collection_id) }} as string) as collection_id,
        cast({{ sql_string(definition.name) }} as string) as measure_name,
        cast({{ sql_string(definition.kind) }} as string) as kind,
        cast({{ sql_string(definition.description) }} as string) as description,
        cast({{ sql_string(definition.sql if definition.kind == 'sql' else definition.function) }} as string)
            as definition
    union all
    {%- endfor %}
    select
        cast(null as string) as collection_id, cast(null as string) as measure_name, cast(null as string) as kind,
        cast(null as string) as description, cast(null as string) as definition
    where 1 = 0
{%- endmacro %}

{#- The CASE branches computing each SQL user measure in instance_measured_ctes (its final select): the user's
    aggregate over the question's rows at the collection's settings. -#}
{% macro user_measure_cases(definitions) -%}
    {%- for definition in definitions if definition.kind == 'sql' %}
            when measure = {{ sql_string(definition.name) }} and collection_id = {{ sql_string(definition.collection_id) }}
                then cast(({{ definition.sql }}) as double)
    {%- endfor %}
{%- endmacro %}
