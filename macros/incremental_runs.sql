{#- Incremental by run: the per-run models compute only the runs whose inputs changed since they last computed
    them, and their tests check only those runs. docs/incremental.md tells the whole story; in short:

    - int_run_fingerprints gives every run a fingerprint of the data its rows are computed from: the run's
      version (a new one at every write) and its collection's judgments and questions. The hooks below add
      the baseline run's version and the settings that change numbers (settings_version), rendered when the
      model runs, so a --vars change is seen even by a build that selects one model.
    - Two tables of the build_state schema record the work (created here, on-run-start):
      run_plans         the runs each per-run model computes in the current (or last) build;
      run_computations  per (model, run): the fingerprint its stored rows were computed from, with the parts
                        of it, and the dbt invocation that computed them.
      (created by int_run_fingerprints' pre-hook, outside any transaction, before any per-run model runs)
    - Each per-run model (materialized incremental, strategy append) has plan_runs as pre-hook: it plans the
      runs whose fingerprint for this model differs from the one recorded, and deletes their rows (and the
      rows of runs that are gone); the model's SQL reads only the planned runs (planned_runs()); the post-hook
      record_runs_computed records what was computed. All of it in the model's one transaction.
    - A model's fingerprint of a run also covers the model's compiled code (a Python model's: its source and that
      of the package modules it imports, package_version) and the fingerprints its per-run parents recorded for
      the run: editing a model recomputes it (and what reads it) for every run, and a
      build that selected only some models leaves their children to recompute the runs in the next build.
-#}

{#- Whether the per-run models compute only the runs that changed (materialized incremental, as on DuckDB), or
    every run at every build (table, as on Spark: dbt_project.yml), with no build_state then. -#}
{% macro runs_computed_incrementally() -%}
    {{ return(graph.nodes['model.' ~ project_name ~ '.run_measures'].config.materialized == 'incremental') }}
{%- endmacro %}

{% macro create_build_state() %}
    {%- if execute and runs_computed_incrementally() -%}
    create schema if not exists build_state;
    create table if not exists build_state.run_plans (
        model_name varchar not null,
        collection_id varchar not null,
        run_id varchar not null,
        fingerprint varchar not null
    );
    create table if not exists build_state.run_computations (
        model_name varchar not null,
        collection_id varchar not null,
        run_id varchar not null,
        fingerprint varchar not null,
        run_fingerprint varchar not null,
        run_version varchar not null,
        collection_version varchar not null,
        baseline_run_version varchar not null,
        settings_version varchar not null,
        invocation_id varchar not null
    );
    create table if not exists build_state.run_means_by_qrels_version (
        collection_id varchar not null,
        run_id varchar not null,
        run_version varchar not null,
        qrels_version integer not null,
        judgments_hash varchar not null,
        settings_key varchar not null,
        measure varchar not null,
        k integer,
        measure_name varchar not null,
        value double
    );
    {%- endif -%}
{% endmacro %}

{#- Everything a build's numbers depend on besides the data, the models' own code and the per-collection settings
    (in each run's collection version, int_run_fingerprints): the vars that change numbers and the measure
    registry, hashed. A change to any of them recomputes every run. -#}
{% macro settings_version() -%}
    {%- set settings = {
        "permutations": [var('n_permutations'), var('permutation_seed')],
        "max_outranking_docs_listed": var('max_outranking_docs_listed'),
        "tie_tolerance": tie_tolerance(),
        "registry": measure_registry()
    } -%}
    {{ return(local_md5(tojson(settings, sort_keys=true))) }}
{%- endmacro %}

{#- A model's code, hashed: its compiled SQL (macros included), without the database's name (a warehouse
    file copied under another name keeps its records); a Python model's source, whose compiled form changes
    with is_incremental. -#}
{% macro code_version(node) -%}
    {%- set code = node.compiled_code if node.language == 'sql' and node.compiled_code else node.raw_code -%}
    {{ return(local_md5(code | replace('"' ~ this.database ~ '".', ''))) }}
{%- endmacro %}

{#- A Python model's package code, as one more SQL argument of its fingerprint: the digest of the package modules
    it imports and of what they import in turn (package_digest, retrieval_metrics/dbt_plugin.py, evaluated once
    when the plan is made: dbt's templates cannot read files). Nothing for a SQL model: its macros are in its
    compiled code. -#}
{% macro package_version(node) -%}
    {%- if node.language == 'python' -%}
        {%- set imported = modules.re.findall('(?m)^(?:from|import) +(retrieval_metrics(?:[.][A-Za-z0-9_]+)*)', node.raw_code) -%}
        {{ return(", (select package_digest('" ~ (imported | unique | sort | join(' ')) ~ "'))") }}
    {%- endif -%}
    {{ return("") }}
{%- endmacro %}

{#- Relations by name at run time, without ref(): hooks and tests read these without depending on them. -#}
{% macro model_relation(name) -%}
    {%- set node = graph.nodes['model.' ~ project_name ~ '.' ~ name] -%}
    {{ return(api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias)) }}
{%- endmacro %}

{% macro build_state_relation(name) -%}
    {{ return(api.Relation.create(database=target.get('database'), schema='build_state', identifier=name)) }}
{%- endmacro %}

{#- The names of the per-run models this node reads. -#}
{% macro per_run_parents(node) -%}
    {%- set parents = [] -%}
    {%- for node_id in node.depends_on.nodes if node_id in graph.nodes -%}
        {%- if graph.nodes[node_id].config.materialized == 'incremental' -%}
            {%- do parents.append(graph.nodes[node_id].alias) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(parents | sort) }}
{%- endmacro %}

{#- In a per-run model's SQL: the runs this build computes for it, a relation to join on (collection_id, run_id). -#}
{% macro planned_runs() -%}
    -- depends_on: {{ ref('int_run_fingerprints') }}
    {%- if config.get('materialized') == 'incremental' %}
    (select collection_id, run_id from {{ build_state_relation('run_plans') }}
        where model_name = '{{ this.identifier }}')
    {%- else %}
    (select collection_id, run_id from {{ ref('int_run_fingerprints') }})
    {%- endif %}
{%- endmacro %}

{#- pre-hook of a per-run model: plan the runs whose fingerprint for this model (the run's fingerprint, the
    model's compiled code, and the fingerprints its per-run parents recorded for the run) differs from the one
    recorded (every run, unless incremental), and delete the stored rows of the planned runs and of the runs
    that are gone. -#}
{% macro plan_runs() -%}
    {%- if execute and model.config.materialized == 'incremental' %}
    {%- set plans = build_state_relation('run_plans') -%}
    {%- set computations = build_state_relation('run_computations') -%}
    {%- set name = this.identifier -%}
    {%- set parents = per_run_parents(model) -%}
    delete from {{ plans }} where model_name = '{{ name }}';
    insert into {{ plans }} (model_name, collection_id, run_id, fingerprint)
    with fingerprints as (
        select
            runs.collection_id,
            runs.run_id,
            md5(concat_ws('|', runs.fingerprint, coalesce(baseline.run_version, 'none'), '{{ settings_version() }}',
                '{{ code_version(model) }}'{{ package_version(model) }}
                {%- for parent in parents %}, coalesce(parent_{{ loop.index }}.fingerprint, 'none'){% endfor %})) as fingerprint
        from {{ model_relation('int_run_fingerprints') }} as runs
        left join {{ model_relation('int_run_fingerprints') }} as baseline
            on baseline.collection_id = runs.collection_id
            and baseline.run_id = runs.baseline_run_id
        {%- for parent in parents %}
        left join {{ computations }} as parent_{{ loop.index }}
            on parent_{{ loop.index }}.model_name = '{{ parent }}'
            and parent_{{ loop.index }}.collection_id = runs.collection_id
            and parent_{{ loop.index }}.run_id = runs.run_id
        {%- endfor %}
    )
    select '{{ name }}', fingerprints.collection_id, fingerprints.run_id, fingerprints.fingerprint
    from fingerprints
    {%- if is_incremental() %}
    where not exists (
        select 1 from {{ computations }} as computed
        where computed.model_name = '{{ name }}'
            and computed.collection_id = fingerprints.collection_id
            and computed.run_id = fingerprints.run_id
            and computed.fingerprint = fingerprints.fingerprint
    )
    {%- endif %};
    {%- if is_incremental() %}
    delete from {{ this }} as stored
    where exists (
        select 1 from {{ plans }} as planned
        where planned.model_name = '{{ name }}'
            and planned.collection_id = stored.collection_id
            and planned.run_id = stored.run_id
    ) or exists (
        select 1 from {{ computations }} as computed
        where computed.model_name = '{{ name }}'
            and computed.collection_id = stored.collection_id
            and computed.run_id = stored.run_id
            and not exists (
                select 1 from {{ model_relation('int_run_fingerprints') }} as runs
                where runs.collection_id = computed.collection_id and runs.run_id = computed.run_id
            )
    );
    {%- endif %}
    {%- endif %}
{%- endmacro %}

{#- post-hook of a per-run model: record what its planned runs' rows were computed from, and forget the runs
    that are gone (every record of the model, under --full-refresh). -#}
{% macro record_runs_computed() -%}
    {%- if execute and model.config.materialized == 'incremental' %}
    {%- set plans = build_state_relation('run_plans') -%}
    {%- set computations = build_state_relation('run_computations') -%}
    {%- set name = this.identifier -%}
    delete from {{ computations }} as computed
    where computed.model_name = '{{ name }}' and (
        {{ 'true or' if flags.FULL_REFRESH }}
        exists (
            select 1 from {{ plans }} as planned
            where planned.model_name = '{{ name }}'
                and planned.collection_id = computed.collection_id
                and planned.run_id = computed.run_id
        ) or not exists (
            select 1 from {{ model_relation('int_run_fingerprints') }} as runs
            where runs.collection_id = computed.collection_id and runs.run_id = computed.run_id
        )
    );
    insert into {{ computations }}
    select
        '{{ name }}',
        runs.collection_id,
        runs.run_id,
        planned.fingerprint,
        runs.fingerprint,
        runs.run_version,
        runs.collection_version,
        coalesce(baseline.run_version, 'none'),
        '{{ settings_version() }}',
        '{{ invocation_id }}'
    from {{ plans }} as planned
    inner join {{ model_relation('int_run_fingerprints') }} as runs
        on planned.collection_id = runs.collection_id and planned.run_id = runs.run_id
    left join {{ model_relation('int_run_fingerprints') }} as baseline
        on baseline.collection_id = runs.collection_id
        and baseline.run_id = runs.baseline_run_id
    where planned.model_name = '{{ name }}';
    {%- if model.language == 'python' %}
    {#- dbt-duckdb leaves a Python incremental model's rows of this build in a table of its own (main.<model>
        __dbt_tmp<timestamp>) once they are appended: drop it, and any an interrupted build left -#}
    {%- set leftovers = run_query("select table_schema, table_name from information_schema.tables "
        ~ "where table_name like '" ~ name ~ "\\_\\_dbt\\_tmp%' escape '\\'") -%}
    {%- for row in leftovers.rows %}
    drop table if exists "{{ row[0] }}"."{{ row[1] }}";
    {%- endfor %}
    {%- endif %}
    {%- endif %}
{%- endmacro %}

{#- Scoped tests. A test with `where: __runs_computed_in_this_build__` checks only the rows of the runs its
    model computed in this build; `where: __runs_not_yet_computed__` (the raw and staging tables, tested
    before any per-run model runs) only the runs no earlier build computed from their current inputs. With
    --full-refresh, or --vars '{test_all_runs: true}', both check every run. -#}
{% macro default__get_where_subquery(relation) -%}
    {%- set where = config.get('where', '') -%}
    {%- if not where -%}
        {{ return(relation) }}
    {%- endif -%}
    {%- set computations = build_state_relation('run_computations') -%}
    {%- set everything = flags.FULL_REFRESH or var('test_all_runs', false) in [true, 'true', 'True'] -%}
    {%- set state_exists = execute and adapter.get_relation(database=computations.database, schema='build_state',
                                                identifier='run_computations') is not none -%}
    {%- if '__runs_computed_in_this_build__' in where -%}
        {%- set computed_here -%}
            select distinct collection_id, run_id from {{ computations }}
            where invocation_id = '{{ invocation_id }}' and model_name = '{{ relation.identifier }}'
        {%- endset -%}
        {%- set where = where | replace('__runs_computed_in_this_build__',
            'true' if everything or not state_exists else runs_condition(computed_here)) -%}
    {%- endif -%}
    {%- if '__runs_not_yet_computed__' in where -%}
        {%- set not_yet_computed -%}
            select runs.collection_id, runs.run_id from {{ model_relation('int_run_fingerprints') }} as runs
            where not exists (
                select 1 from {{ computations }} as computed
                where computed.invocation_id <> '{{ invocation_id }}'
                    and computed.collection_id = runs.collection_id
                    and computed.run_id = runs.run_id
                    and computed.run_fingerprint = runs.fingerprint
            )
        {%- endset -%}
        {%- set where = where | replace('__runs_not_yet_computed__',
            'true' if everything or not state_exists else runs_condition(not_yet_computed)) -%}
    {%- endif -%}
    {{ return('(select * from ' ~ relation ~ ' as scoped_rows where ' ~ where ~ ') dbt_subquery') }}
{%- endmacro %}

{#- The runs a query returns (collection_id, run_id: a few rows), as a condition on constants: DuckDB skips the
    row groups of every other run by their min/max, where a join with the query would read the whole table
    (at eleven 10M-line runs, a test scoped by a join took 2 to 5 s; by constants, well under one). -#}
{% macro runs_condition(runs_query) -%}
    {%- set runs_by_collection = {} -%}
    {%- for row in run_query(runs_query).rows -%}
        {%- do runs_by_collection.setdefault(row[0], []).append(row[1]) -%}
    {%- endfor -%}
    {%- set conditions = [] -%}
    {%- for collection_id, run_ids in runs_by_collection | dictsort -%}
        {%- set quoted = [] -%}
        {%- for run_id in run_ids | sort -%}{%- do quoted.append(sql_string(run_id) | trim) -%}{%- endfor -%}
        {%- do conditions.append('(collection_id = ' ~ (sql_string(collection_id) | trim) ~ ' and run_id in ('
            ~ quoted | join(', ') ~ '))') -%}
    {%- endfor -%}
    {{ return('(' ~ (conditions | join(' or ') if conditions else 'false') ~ ')') }}
{%- endmacro %}

{#- In a per-run model's SQL: the rows of `relation` that belong to the runs this build computes for it (every
    row, in a dbt unit test: its inputs are the given rows). -#}
{% macro rows_of_planned_runs(relation) -%}
    {%- if model.resource_type == 'unit_test' -%}
    select * from {{ relation }}
    {%- else -%}
    select planned_rows.*
    from {{ relation }} as planned_rows
    inner join {{ planned_runs() }} as planned
        on planned_rows.collection_id = planned.collection_id
        and planned_rows.run_id = planned.run_id
    {%- endif -%}
{%- endmacro %}
