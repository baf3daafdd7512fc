{#- on-run-start: stop with one clear line when the scripts have not written any run yet, instead of a
    "table does not exist" error from deep inside a model. -#}
{% macro check_raw_sources() %}
    {%- if execute and flags.WHICH in ['build', 'run'] -%}
        {%- for table in ['runs', 'rankings', 'documents', 'questions', 'qrels'] -%}
            {%- set relation = adapter.get_relation(database=target.database, schema='raw', identifier=table) -%}
            {%- if relation is none -%}
                {{ exceptions.raise_compiler_error(
                    "raw." ~ table ~ " is missing from " ~ target.path ~ ": write a run first with "
                    ~ "`retrieval-metrics rank --retriever keyword_overlap` (or `make run`)") }}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
{% endmacro %}
