{#- What two versions' means must share to be compared: the run's settings but the qrels version (run_measures'
    evaluation_settings JSON without its "qrels_version" member), with the hash of the vars and the registry. -#}
{% macro qrels_history_settings_key(evaluation_settings) -%}
    md5(concat(regexp_replace({{ evaluation_settings }}, '"qrels_version": [0-9]+, ', ''), '{{ settings_version() }}'))
{%- endmacro %}

{#- The qrels version a run_measures row was measured on, from its evaluation_settings JSON. -#}
{% macro measured_qrels_version(evaluation_settings) -%}
    cast(regexp_extract({{ evaluation_settings }}, '"qrels_version": ([0-9]+)', 1) as integer)
{%- endmacro %}

{#- post-hook of run_means_by_qrels_version: forget the means of runs gone or written again, and every earlier row
    of a collection whose current version's judgments differ from those recorded under the same number. -#}
{% macro forget_means_no_longer_valid() -%}
    {%- if execute and model.config.materialized == 'incremental' %}
    delete from {{ this }} as recorded
    where not exists (
        select 1 from {{ model_relation('int_run_fingerprints') }} as runs
        where runs.collection_id = recorded.collection_id and runs.run_id = recorded.run_id
            and runs.run_version = recorded.run_version
    ) or (recorded.invocation_id <> '{{ invocation_id }}' and recorded.collection_id in (
        select fresh.collection_id from {{ this }} as fresh
        inner join {{ this }} as stale
            on fresh.collection_id = stale.collection_id and fresh.qrels_version = stale.qrels_version
        where fresh.invocation_id = '{{ invocation_id }}' and stale.judgments_hash <> fresh.judgments_hash
    ))
    {%- endif %}
{%- endmacro %}
