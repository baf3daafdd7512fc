{#- Incremental by run (docs/incremental.md). Each per-run model is dbt's incremental materialization with the
    append strategy (dbt_project.yml). Its rows carry the run's `fingerprint` for the model, the dbt
    `invocation_id` that computed them and when (`computed_at`). A build computes the runs whose current
    fingerprint is not the one their stored rows carry (runs_to_compute, in the model's SQL), dbt appends their
    rows, and the post-hook delete_stale_runs deletes every row whose fingerprint is no longer current: the runs'
    earlier rows, and those of runs that are gone. (delete+insert on [collection_id, run_id] would do the first,
    but dbt-duckdb deletes by joining every stored row of a run to every new one: a run of 200 questions x 1,000
    documents recomputed took minutes.) A model's fingerprint of a run hashes int_run_fingerprints' (the run's data, its
    collection's judgments, questions, tags and settings, the vars that change numbers and the registry; and, for
    a model whose config meta says reads_baselines, the collection's baselines and their versions), the code behind
    the model (code_digest) and the fingerprints its per-run parents' rows carry for the run. Spark's Parquet tables take no DELETE: there the per-run models are tables, every run computed each build. -#}

{#- Whether the per-run models are incremental (DuckDB), or tables rebuilt whole (Spark). -#}
{% macro runs_computed_incrementally() -%}
    {{ return(graph.nodes['model.' ~ project_name ~ '.run_measures'].config.materialized == 'incremental') }}
{%- endmacro %}

{#- The vars that change numbers and the measure registry, hashed: a change to any of them recomputes every run. -#}
{% macro settings_version() -%}
    {%- set settings = {
        "permutations": [setting('n_permutations'), setting('permutation_seed')],
        "max_outranking_docs_listed": setting('max_outranking_docs_listed'),
        "tie_tolerance": tie_tolerance(),
        "registry": measure_registry()
    } -%}
    {{ return(local_md5(tojson(settings, sort_keys=true))) }}
{%- endmacro %}

{#- A model by name, as a relation, without ref(): hooks read models without depending on them. -#}
{% macro model_relation(name) -%}
    {%- set node = graph.nodes['model.' ~ project_name ~ '.' ~ name] -%}
    {{ return(api.Relation.create(database=node.database, schema=node.schema, identifier=node.alias)) }}
{%- endmacro %}

{#- Whether `node` is incremental by collection (config meta per_collection: the all-pairs marts), not by run. -#}
{% macro is_per_collection(node) -%}
    {{ return((node.config.get('meta') or {}).get('per_collection', false)) }}
{%- endmacro %}

{#- The incremental models `node` reads directly: by run (`per_collection` false) or by collection. -#}
{% macro incremental_parents(node, per_collection=false) -%}
    {%- set parents = [] -%}
    {%- for node_id in node.depends_on.nodes if node_id in graph.nodes -%}
        {%- set parent = graph.nodes[node_id] -%}
        {%- if parent.config.materialized == 'incremental' and is_per_collection(parent) == per_collection -%}
            {%- do parents.append(parent.alias) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(parents | sort) }}
{%- endmacro %}

{#- The code behind a model's rows, as a SQL string: on DuckDB, from the project's plugin (retrieval_metrics/dbt_plugin.py),
    asked once when the model runs; on Spark, whose models are rebuilt whole, the model's own code. -#}
{% macro code_digest(name) -%}{{ return(adapter.dispatch('code_digest', 'retrieval_metrics')(name)) }}{%- endmacro %}
{% macro default__code_digest(name) -%}
    {%- set digest = run_query("select code_digest('" ~ name ~ "')").columns[0].values()[0] if execute else '' -%}
    {{ return("'" ~ digest ~ "'") }}
{%- endmacro %}
{% macro spark__code_digest(name) -%}{{ return("'" ~ local_md5(model.raw_code) ~ "'") }}{%- endmacro %}

{#- The column of int_run_fingerprints a model's fingerprint of a run starts from: with the collection's baselines
    for a model that reads them (config meta reads_baselines: question_comparisons; its readers follow through its
    fingerprint), else without, so that a change of the baselines recomputes the comparisons and nothing else. -#}
{% macro run_fingerprint_column(node) -%}
    {%- set reads_baselines = (node.config.get('meta') or {}).get('reads_baselines') -%}
    {{ return('fingerprint_with_baselines' if reads_baselines else 'fingerprint') }}
{%- endmacro %}

{#- (collection_id, run_id, fingerprint): every run, with its current fingerprint for the model being built. -#}
{% macro run_fingerprints() -%}
    {%- set parents = incremental_parents(model) if execute else [] -%}
    select
        runs.collection_id,
        runs.run_id,
        md5(concat_ws('|', runs.{{ run_fingerprint_column(model) }}, {{ code_digest(model.name) }}
            {%- for parent in parents %}, coalesce(parent_{{ loop.index }}.fingerprint, 'none'){% endfor %})) as fingerprint
    from {{ model_relation('int_run_fingerprints') if execute else ref('int_run_fingerprints') }} as runs
    {%- for parent in parents %}
    left join (select distinct collection_id, run_id, fingerprint from {{ model_relation(parent) }}) as parent_{{ loop.index }}
        on runs.collection_id = parent_{{ loop.index }}.collection_id and runs.run_id = parent_{{ loop.index }}.run_id
    {%- endfor %}
{%- endmacro %}

{#- (collection_id, fingerprint): every collection with runs, with its current fingerprint for the per-collection
    model being built: md5 of the collection's settings across runs, each of its runs' fingerprint for the model
    (run_fingerprints: their measures' fingerprints with them), and its per-collection parents' fingerprints.
    dbt_python.collections_to_compute computes the same for the Python models. -#}
{% macro collection_fingerprints() -%}
    {%- set parents = incremental_parents(model, per_collection=true) if execute else [] -%}
    select
        runs.collection_id,
        md5(concat_ws('|', min(collections.across_runs_hash),
            string_agg(runs.run_id || ':' || runs.fingerprint, '|' order by runs.run_id)
            {%- for parent in parents %}, coalesce(min(parent_{{ loop.index }}.fingerprint), 'none'){% endfor %})) as fingerprint
    from ({{ run_fingerprints() }}) as runs
    inner join {{ model_relation('int_run_fingerprints') }} as collections
        on runs.collection_id = collections.collection_id and runs.run_id = collections.run_id
    {%- for parent in parents %}
    left join (select distinct collection_id, fingerprint from {{ model_relation(parent) }}) as parent_{{ loop.index }}
        on runs.collection_id = parent_{{ loop.index }}.collection_id
    {%- endfor %}
    group by runs.collection_id
{%- endmacro %}

{#- In a per-run model's SQL: the runs this build computes, with their fingerprint (every run, but in an incremental
    build those whose stored rows carry another fingerprint or none). A unit test's: its given runs. -#}
{% macro runs_to_compute(given_runs=none) -%}
    {%- if model.resource_type == 'unit_test' %}
    select distinct collection_id, run_id, 'given' as fingerprint from {{ given_runs }}
    {%- else %}
    -- depends_on: {{ ref('int_run_fingerprints') }}
    select * from ({{ run_fingerprints() }}) as current_runs
    {%- if is_incremental() %}
    where not exists (
        select 1 from {{ this }} as stored
        where stored.collection_id = current_runs.collection_id and stored.run_id = current_runs.run_id
            and stored.fingerprint = current_runs.fingerprint
    )
    {%- endif %}
    {%- endif %}
{%- endmacro %}

{#- In a per-run model's SQL: the rows of `relation` that belong to the runs `runs` computes. -#}
{% macro rows_of_runs(relation, runs='runs_to_compute') -%}
    select {{ columns_computed_from(relation, 'rows_of_runs') }}
    from {{ relation }} as rows_of_runs
    inner join {{ runs }} on rows_of_runs.collection_id = {{ runs }}.collection_id and rows_of_runs.run_id = {{ runs }}.run_id
{%- endmacro %}

{#- The columns of `relation` but those computed_columns adds (every column, in a unit test or at parse). -#}
{% macro columns_computed_from(relation, alias) -%}
    {%- if not execute or model.resource_type == 'unit_test' or relation is string -%}
        {{ return(alias ~ '.*') }}
    {%- endif -%}
    {%- set names = [] -%}
    {%- for column in adapter.get_columns_in_relation(relation)
            if column.name | lower not in ['fingerprint', 'invocation_id', 'computed_at'] -%}
        {%- do names.append(alias ~ '.' ~ adapter.quote(column.name)) -%}
    {%- endfor -%}
    {{ return(names | join(', ') if names else alias ~ '.*') }}
{%- endmacro %}

{#- In a per-run model's final select: the columns that say what computed the row. -#}
{% macro computed_columns(runs='runs_to_compute') -%}
    cast({{ runs }}.fingerprint as string) as fingerprint,
    cast('{{ invocation_id }}' as string) as invocation_id,
    cast('{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S.%f") }}' as timestamp) as computed_at
{%- endmacro %}

{#- post-hook of a per-run (or per-collection) model: delete the rows of the runs (collections) whose fingerprint is
    no longer current (gone, or computed again, perhaps to no rows); a Python model's new rows get the invocation
    and its time. -#}
{% macro delete_stale_runs() -%}
    {%- if execute and model.config.materialized == 'incremental' %}
    {%- set per_collection = is_per_collection(model) %}
    delete from {{ this }} as stored
    where not exists (
        select 1 from ({{ collection_fingerprints() if per_collection else run_fingerprints() }}) as current_runs
        where stored.collection_id = current_runs.collection_id
            {%- if not per_collection %} and stored.run_id = current_runs.run_id{% endif %}
            and stored.fingerprint = current_runs.fingerprint
    );
    {%- if model.language == 'python' %}
    update {{ this }} set invocation_id = '{{ invocation_id }}',
        computed_at = cast('{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S.%f") }}' as timestamp)
    where invocation_id is null;
    {#- dbt-duckdb leaves a Python incremental model's new rows in a table of their own (<model>__dbt_tmp<time>):
        drop it, and any an interrupted build left -#}
    {%- for row in run_query("select table_schema, table_name from information_schema.tables where table_name like '"
            ~ this.identifier ~ "\\_\\_dbt\\_tmp%' escape '\\'").rows %}
    drop table if exists "{{ row[0] }}"."{{ row[1] }}";
    {%- endfor %}
    {%- endif %}
    {%- endif %}
{%- endmacro %}

{#- Scoped tests (dbt renders `where` when it parses, so these placeholders take this build's values when the test
    runs): `__runs_computed_in_this_build__`, the rows this dbt invocation computed; `__runs_not_yet_computed__`
    (the raw rankings' tests, before any per-run model runs), the runs written since an earlier build computed
    them (question_measures' computed_at). --full-refresh, or --vars '{test_all_runs: true}', checks every row. -#}
{% macro default__get_where_subquery(relation) -%}
    {%- set where = config.get('where', '') -%}
    {%- if not where -%}
        {{ return(relation) }}
    {%- endif -%}
    {%- set everything = flags.FULL_REFRESH or setting('test_all_runs') -%}
    {%- set computed = model_relation('question_measures') -%}
    {%- set stored = execute and not everything and runs_computed_incrementally()
        and adapter.get_relation(computed.database, computed.schema, computed.identifier) is not none -%}
    {%- set where = where | replace('__runs_computed_in_this_build__',
        "invocation_id = '" ~ invocation_id ~ "'" if stored else 'true') -%}
    {%- set computed_runs -%}
        (collection_id, run_id) not in (select runs.collection_id, runs.run_id
            from {{ model_relation('stg_raw__runs') }} as runs
            inner join (select collection_id, run_id, max(computed_at) as computed_at from {{ computed }}
                        where invocation_id <> '{{ invocation_id }}' group by collection_id, run_id) as computed
                on runs.collection_id = computed.collection_id and runs.run_id = computed.run_id
            where computed.computed_at > runs.created_at)
    {%- endset -%}
    {%- set where = where | replace('__runs_not_yet_computed__', computed_runs if stored else 'true') -%}
    {{ return('(select * from ' ~ relation ~ ' as scoped_rows where ' ~ where ~ ') dbt_subquery') }}
{%- endmacro %}
