{#- The run means at every qrels version a build measured (docs/judging.md): run_measures holds each run's means
    at the collection's current qrels version only, so its post-hook below keeps them, version by version, in
    build_state.run_means_by_qrels_version (created with the build state, macros/incremental_runs.sql).
    qrels_version_changes compares them. A version's means are recorded once per (run version, settings): they
    cannot change while the run, the version's judgments and the settings stay the same, so --full-refresh
    recomputes the current version's bit for bit and keeps the others. What can no longer hold is forgotten:
    the rows of a run removed or written again (another run_version), and every row of a collection whose
    current version's judgments differ from the ones recorded under the same version number (its base qrels
    were imported again, or its judgments removed and imported anew). DuckDB only: Spark keeps no build state,
    and there qrels_version_changes reads the current version only (no pair of versions). -#}
{% macro record_run_means_by_qrels_version() -%}
    {%- if execute and model.config.materialized == 'incremental' %}
    {%- set history = build_state_relation('run_means_by_qrels_version') -%}
    {%- set runs = model_relation('int_run_fingerprints') -%}
    {%- set models = per_run_ancestors(model) + [this.identifier] -%}
    create or replace temporary table measured_now as
    -- the rows of the runs that run_measures and every per-run model it reads computed from the inputs as they
    -- are now (a build that selected run_measures without its parents leaves them out), each with the qrels
    -- version its settings say it was measured on
    select
        measures.collection_id,
        measures.run_id,
        runs.run_version,
        {{ measured_qrels_version('measures.evaluation_settings') }} as qrels_version,
        runs.judgments_hash,
        {{ qrels_history_settings_key('measures.evaluation_settings') }} as settings_key,
        measures.measure,
        measures.k,
        measures.measure_name,
        measures.value
    from {{ this }} as measures
    inner join {{ runs }} as runs
        on measures.collection_id = runs.collection_id
        and measures.run_id = runs.run_id
    where not exists (
        select 1 from {{ build_state_relation('run_computations') }} as computed
        where computed.collection_id = runs.collection_id
            and computed.run_id = runs.run_id
            and computed.model_name in ('{{ models | join("', '") }}')
            and computed.run_fingerprint <> runs.fingerprint
    );
    delete from {{ history }} as recorded
    where not exists (
        select 1 from {{ runs }} as runs
        where runs.collection_id = recorded.collection_id
            and runs.run_id = recorded.run_id
            and runs.run_version = recorded.run_version
    ) or recorded.collection_id in (
        select distinct measured_now.collection_id
        from measured_now
        inner join {{ history }} as recorded_before
            on measured_now.collection_id = recorded_before.collection_id
            and measured_now.run_id = recorded_before.run_id
            and measured_now.qrels_version = recorded_before.qrels_version
        where measured_now.judgments_hash <> recorded_before.judgments_hash
    );
    insert into {{ history }}
    select * from measured_now
    where not exists (
        select 1 from {{ history }} as recorded
        where recorded.collection_id = measured_now.collection_id
            and recorded.run_id = measured_now.run_id
            and recorded.run_version = measured_now.run_version
            and recorded.qrels_version = measured_now.qrels_version
            and recorded.settings_key = measured_now.settings_key
    );
    drop table measured_now
    {%- endif %}
{%- endmacro %}

{#- What two versions' means must share to be compared: the run's settings but the qrels version (run_measures'
    evaluation_settings JSON without its "qrels_version" member), with the hash of the vars and the registry. -#}
{% macro qrels_history_settings_key(evaluation_settings) -%}
    md5(concat(regexp_replace({{ evaluation_settings }}, '"qrels_version": [0-9]+, ', ''), '{{ settings_version() }}'))
{%- endmacro %}

{#- The qrels version a run_measures row was measured on, from its evaluation_settings JSON. -#}
{% macro measured_qrels_version(evaluation_settings) -%}
    cast(regexp_extract({{ evaluation_settings }}, '"qrels_version": ([0-9]+)', 1) as integer)
{%- endmacro %}

{#- Rank-biased overlap's persistence p (0 < p < 1), as a double: the weight of depth d is proportional to p^d.
    (Spark reads a literal 0.9 as a decimal, and divides decimals to 6 digits.) -#}
{% macro rbo_persistence() -%}
    {%- set text = var('rbo_persistence') | string | trim -%}
    {%- set number = text | float(-1) -%}
    {%- if not (0 < number < 1) -%}
        {{ exceptions.raise_compiler_error("var rbo_persistence: " ~ text ~ " is not a number between 0 and 1 (exclusive)") }}
    {%- endif -%}
    {{ return('cast(' ~ number ~ ' as double)') }}
{%- endmacro %}

{#- The names of the per-run models `node` reads, directly or through others. -#}
{% macro per_run_ancestors(node) -%}
    {%- set found = [] -%}
    {%- set pending = node.depends_on.nodes | list -%}
    {%- for _ in range(graph.nodes | length) if pending -%}
        {%- set node_id = pending.pop() -%}
        {%- if node_id in graph.nodes and graph.nodes[node_id].alias not in found -%}
            {%- if graph.nodes[node_id].config.materialized == 'incremental' -%}
                {%- do found.append(graph.nodes[node_id].alias) -%}
            {%- endif -%}
            {%- do pending.extend(graph.nodes[node_id].depends_on.nodes) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(found | sort) }}
{%- endmacro %}
