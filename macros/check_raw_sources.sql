{#- on-run-start: stop with one clear line when the scripts have not written any run yet, instead of a
    "table does not exist" error from deep inside a model. On Spark, first declare the raw tables over the
    Parquet files the commands published (retrieval_metrics/spark.py), when RETRIEVAL_RAW_PARQUET names them. -#}
{% macro check_raw_sources() %}
    {%- if execute and flags.WHICH in ['build', 'run'] -%}
        {%- set declared = adapter.dispatch('declare_raw_tables', 'retrieval_metrics')() -%}
        {%- for table in ['runs', 'rankings', 'documents', 'questions', 'qrels'] if not declared -%}
            {%- set relation = adapter.get_relation(database=target.get('database'), schema='raw', identifier=table) -%}
            {%- if relation is none -%}
                {{ exceptions.raise_compiler_error(
                    "raw." ~ table ~ " is missing from " ~ (target.path or target.schema) ~ ": write a run first with "
                    ~ "`retrieval-metrics rank --retriever keyword_overlap` (or `make run`)") }}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
{% endmacro %}

{% macro default__declare_raw_tables() %}{{ return(false) }}{% endmacro %}

{#- Spark: raw.<table> over <RETRIEVAL_RAW_PARQUET>/<table>.parquet for every file there (external tables:
    dropping one leaves its file). -#}
{% macro spark__declare_raw_tables() %}
    {%- set directory = env_var('RETRIEVAL_RAW_PARQUET', '') -%}
    {%- if directory -%}
        {%- do run_query('create schema if not exists raw') -%}
        {%- for table in ['runs', 'rankings', 'documents', 'questions', 'qrels', 'question_latencies', 'chunk_rankings',
                          'collection_settings', 'question_tags', 'judging_pools', 'judgments',
                          'judgment_versions'] -%}
            {%- do run_query('drop table if exists raw.' ~ table) -%}
            {%- do run_query("create table raw." ~ table ~ " using parquet location '" ~ directory ~ "/" ~ table ~ ".parquet'") -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(directory != '') }}
{% endmacro %}
