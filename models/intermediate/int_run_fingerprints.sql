-- One row per run: a fingerprint of everything but code its rows in the per-run models are computed from: the
-- run's version, its collection's judgments, questions, question tags and settings but its baselines, and the vars
-- that change numbers with the measure registry (settings_version); and the same with the collection's baselines
-- (their ids and versions), for the models that read them (question_comparisons, and its readers through it). Each
-- per-run model adds the code behind it and its per-run parents' fingerprints (macros/incremental_runs.sql); the
-- per-collection models (the all-pairs marts) add the collection's settings across runs (across_runs_hash).

{#- The collection's settings, hashed in two groups: those that change a per-run model's numbers or are recorded
    with them (dbt_project.yml's setting_definitions: not the gates, which check numbers and change none), and those
    that change only what compares a collection's runs together (across_runs); the baselines in neither, as they
    change the comparisons only (baseline_versions). -#}
{%- set setting_groups = {'settings': [], 'across_runs': []} -%}
{%- for name, definition in var('setting_definitions').items() if name != 'baseline_run_id' -%}
    {%- if definition.get('across_runs') -%}
        {%- do setting_groups['across_runs'].append(name) -%}
    {%- elif definition.get('changes') or definition.get('recorded') -%}
        {%- do setting_groups['settings'].append(name) -%}
    {%- endif -%}
{%- endfor %}

with runs as (
    select * from {{ ref('stg_raw__runs') }}
),

judgment_versions as (
    select
        collection_id,
        {{ unordered_hash_agg(['question_id', 'doc_id', 'relevance']) }} as judgments_hash
    from {{ ref('int_qrels_unioned') }}
    group by collection_id
),

question_versions as (
    select
        collection_id,
        {{ unordered_hash_agg(['question_id', 'question_text']) }} as questions_hash
    from {{ ref('int_questions_unioned') }}
    group by collection_id
),

tag_versions as (
    select
        collection_id,
        {{ unordered_hash_agg(['question_id', 'tag']) }} as tags_hash
    from {{ ref('int_question_tags_unioned') }}
    group by collection_id
),

{%- for group, names in setting_groups.items() %}

{{ group }}_versions as (
    select
        collection_id,
        {{ unordered_hash_agg(['setting', 'value']) }} as {{ group }}_hash
    from {{ ref('int_collection_settings') }}
    where setting in ('{{ names | join("', '") }}')
    group by collection_id
),
{%- endfor %}

-- each collection's baselines, by id and version (none: a named run not in raw.runs)
baseline_versions as (
    select
        baselines.collection_id,
        {{ unordered_hash_agg(['baselines.value', "coalesce(baseline.run_version, 'none')"]) }} as baselines_hash
    from {{ ref('int_collection_settings') }} as baselines
    left join runs as baseline
        on baselines.collection_id = baseline.collection_id
        and baselines.value = baseline.run_id
    where baselines.setting = 'baseline_run_id'
    group by baselines.collection_id
),

versioned as (
    select
        runs.collection_id,
        runs.run_id,
        runs.run_version,
        coalesce(baseline_versions.baselines_hash, 'none') as baselines_hash,
        coalesce(judgment_versions.judgments_hash, 'none') as judgments_hash,
        coalesce(across_runs_versions.across_runs_hash, 'none') as across_runs_hash,
        concat_ws(
            '/', coalesce(judgment_versions.judgments_hash, 'none'), coalesce(question_versions.questions_hash, 'none'),
            coalesce(settings_versions.settings_hash, 'none'), coalesce(tag_versions.tags_hash, 'none')
        ) as collection_version
    from runs
    left join judgment_versions
        on runs.collection_id = judgment_versions.collection_id
    left join question_versions
        on runs.collection_id = question_versions.collection_id
    left join settings_versions
        on runs.collection_id = settings_versions.collection_id
    left join tag_versions
        on runs.collection_id = tag_versions.collection_id
    left join baseline_versions
        on runs.collection_id = baseline_versions.collection_id
    left join across_runs_versions
        on runs.collection_id = across_runs_versions.collection_id
),

fingerprinted as (
    select
        *,
        md5(concat_ws('|', run_version, collection_version, '{{ settings_version() }}')) as fingerprint
    from versioned
)

select
    collection_id,
    run_id,
    cast(fingerprint as string) as fingerprint,
    cast(md5(concat_ws('|', fingerprint, baselines_hash)) as string) as fingerprint_with_baselines,
    cast(run_version as string) as run_version,
    cast(collection_version as string) as collection_version,
    cast(baselines_hash as string) as baselines_hash,
    cast(judgments_hash as string) as judgments_hash,
    cast(across_runs_hash as string) as across_runs_hash
from fingerprinted
