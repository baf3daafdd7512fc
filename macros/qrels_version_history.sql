{#- The run means at every qrels version a build measured (docs/judging.md): run_measures holds each run's means
    at the collection's current qrels version only, so its post-hook below keeps them, version by version, in
    build_state.run_means_by_qrels_version (created with the build state, macros/incremental_runs.sql).
    qrels_version_changes compares them. A version's means are recorded once per (run version, settings): they
    cannot change while the run, the version's judgments and the settings stay the same, so --full-refresh
    recomputes the current version's bit for bit and keeps the others. What can no longer hold is forgotten:
    the rows of a run removed or written again (another run_version), and every row of a collection whose
    current version's judgments differ from the ones recorded under the same version number (its base qrels
    were imported again, or its judgments removed and imported anew). DuckDB only: Spark keeps no build state,
    and there int_run_means_by_qrels_version holds the current version only. -#}
{% macro record_run_means_by_qrels_version() -%}
    {%- if execute and model.config.materialized == 'incremental' %}
    {%- set history = build_state_relation('run_means_by_qrels_version') -%}
    {%- set runs = model_relation('int_run_fingerprints') -%}
    {%- set settings = model_relation('int_collection_evaluation_settings') -%}
    delete from {{ history }} as recorded
    where not exists (
        select 1 from {{ runs }} as runs
        where runs.collection_id = recorded.collection_id
            and runs.run_id = recorded.run_id
            and runs.run_version = recorded.run_version
    ) or recorded.collection_id in (
        select distinct recorded_now.collection_id
        from {{ history }} as recorded_now
        inner join {{ settings }} as settings
            on recorded_now.collection_id = settings.collection_id
            and recorded_now.qrels_version = settings.qrels_version
        inner join {{ runs }} as runs
            on recorded_now.collection_id = runs.collection_id
            and recorded_now.run_id = runs.run_id
        where recorded_now.judgments_hash <> runs.judgments_hash
    );
    insert into {{ history }}
    with current_means as (
        select
            measures.collection_id,
            measures.run_id,
            runs.run_version,
            settings.qrels_version,
            runs.judgments_hash,
            {{ qrels_history_settings_key('measures.evaluation_settings', 'settings.qrels_version') }} as settings_key,
            measures.measure,
            measures.k,
            measures.measure_name,
            measures.value
        from {{ this }} as measures
        inner join {{ runs }} as runs
            on measures.collection_id = runs.collection_id
            and measures.run_id = runs.run_id
        inner join {{ settings }} as settings
            on measures.collection_id = settings.collection_id
    )
    select * from current_means
    where not exists (
        select 1 from {{ history }} as recorded
        where recorded.collection_id = current_means.collection_id
            and recorded.run_id = current_means.run_id
            and recorded.run_version = current_means.run_version
            and recorded.qrels_version = current_means.qrels_version
            and recorded.settings_key = current_means.settings_key
    )
    {%- endif %}
{%- endmacro %}

{#- What two versions' means must share to be compared: the run's settings but the qrels version (run_measures'
    evaluation_settings JSON without its "qrels_version" member), with the hash of the vars and the registry. -#}
{% macro qrels_history_settings_key(evaluation_settings, qrels_version) -%}
    md5(concat(
        replace({{ evaluation_settings }}, concat('"qrels_version": ', cast({{ qrels_version }} as string), ', '), ''),
        '{{ settings_version() }}'
    ))
{%- endmacro %}

{#- Rank-biased overlap's persistence p (0 < p < 1): the weight of depth d is proportional to p^d. -#}
{% macro rbo_persistence() -%}
    {%- set text = var('rbo_persistence') | string | trim -%}
    {%- set number = text | float(-1) -%}
    {%- if not (0 < number < 1) -%}
        {{ exceptions.raise_compiler_error("var rbo_persistence: " ~ text ~ " is not a number between 0 and 1 (exclusive)") }}
    {%- endif -%}
    {{ return(number) }}
{%- endmacro %}
