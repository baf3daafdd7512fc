{#- on-run-start: any dbt build or run of the warehouse, the commands' or a plain `dbt build`, drops the record of
    the last good `retrieval-metrics build` first: only that command writes it again, once the build passed and
    its serving copy is published (retrieval_metrics/up_to_date.py). So a failed or outside build is never taken
    for the one recorded, and the next `retrieval-metrics build` is whole. DuckDB only: the record is the
    DuckDB warehouse's. Committed here: dbt rolls back what the on-run-start hooks' SQL did. -#}
{% macro forget_last_build() %}
    {%- if execute and flags.WHICH in ['build', 'run', 'seed', 'test', 'snapshot'] -%}
        {%- do adapter.dispatch('forget_last_build', 'retrieval_metrics')() -%}
    {%- endif -%}
{% endmacro %}

{% macro default__forget_last_build() %}{% endmacro %}

{% macro duckdb__forget_last_build() %}
    {%- do run_query('drop table if exists build_state.last_build') -%}
    {%- do adapter.commit() -%}
{% endmacro %}
