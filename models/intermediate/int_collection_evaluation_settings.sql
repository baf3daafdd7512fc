-- One row per collection (with judgments or questions): the settings its runs are evaluated under, one column each
-- of those the models read (int_collection_settings' rows side by side; the baselines as one list), and as the JSON that run_measures records
-- those whose definition says `recorded` (dbt_project.yml's setting_definitions: those that change the values).
-- A table, built once per build: every per-run model reads it, and as a view its pivot took about 75 ms a read on
-- Docent (1 ms as a table).

{{ config(materialized="table") }}

with settings as (
    select * from {{ ref('int_collection_settings') }}
),

{#- the recorded settings, by name as Python's json.dumps(sort_keys=True) orders them, each with the JSON its value
    is: a list, the version it resolves to, a yes-or-no, a number (none: null; a choice of numbers too), or text -#}
{%- set definitions = var('setting_definitions') -%}
{%- set recorded = [] -%}
{%- for name in definitions | sort if definitions[name].get('recorded') -%}
    {%- set definition = definitions[name] -%}
    {%- set texts = [] -%}
    {%- for choice in definition.get('choices', ['text']) if not (choice | string).isdigit() %}{% do texts.append(choice) %}{% endfor -%}
    {%- set json = 'list' if definition.get('list_valued')
        else definition.rule if definition.rule in ['version', 'boolean']
        else 'number' if definition.rule in ['integer', 'number'] or (definition.rule == 'one_of' and not texts)
        else 'text' -%}
    {%- do recorded.append((name, json)) -%}
{%- endfor -%}

{#- each recorded list's items, as JSON, in order -#}
{%- for name, json in recorded if json == 'list' %}
recorded_list_{{ name }} as (
    select
        collection_id,
        {%- if definitions[name].rule in ['cutoffs', 'differences'] %}
        {{ ordered_string_agg('value', ', ', 'cast(value as double)') }} as items
        {%- else %}
        {{ ordered_string_agg("concat('\"', value, '\"')", ', ', 'value') }} as items
        {%- endif %}
    from settings
    where setting = '{{ name }}'
    group by collection_id
),
{% endfor %}

-- a collection's baselines, as one text: run ids in order, ', ' between (none: 'none')
baselines as (
    select
        collection_id,
        {{ ordered_string_agg('value', ', ', 'value') }} as baseline_run_ids
    from settings
    where setting = 'baseline_run_id'
    group by collection_id
),

-- each recorded setting of one value, as stored
recorded_values as (
    select
        collection_id
        {%- for name, json in recorded if json != 'list' %},
        max(case when setting = '{{ name }}' then value end) as recorded_{{ name }}
        {%- endfor %}
    from settings
    group by collection_id
),

one_valued as (
    select
        collection_id,
        max(case when setting = 'preset' then value end) as preset,
        max(case when setting = 'relevance_level' then cast(value as integer) end) as relevance_level,
        max(case when setting = 'averaging' then value end) as averaging,
        max(case when setting = 'judged_docs_only' then value end) = 'true' as judged_docs_only,
        max(case when setting = 'ignore_identical_ids' then value end) = 'true' as ignore_identical_ids,
        -- int_collection_settings lists a collection's own value; without one, the var's
        coalesce(max(case when setting = 'max_docs_per_question' then value end), '{{ setting('max_docs_per_question') }}')
            as max_docs_per_question,
        max(case when setting = 'err_max_grade' then cast(value as integer) end) as err_max_grade,
        max(case when setting = 'rbp_persistence' then value end) as rbp_persistence,
        max(case when setting = 'qrels_version' then value end) as qrels_version,
        max(case when setting = 'trec_eval_version' then cast(value as integer) end) as trec_eval_version,
        max(case when setting = 'bootstrap_resamples' then cast(value as integer) end) as bootstrap_resamples,
        max(case when setting = 'bootstrap_seed' then cast(value as bigint) end) as bootstrap_seed
    from settings
    where setting not in ('k_values', 'baseline_run_id', 'gated_run_ids', 'gated_measures')
    group by collection_id
),

-- the qrels version the measures use: the collection's latest for latest (0 before any import --judgments), else
-- the one named
versions as (
    select
        one_valued.collection_id,
        case
            when one_valued.qrels_version = 'latest' then coalesce(max(judgments.qrels_version), 0)
            else cast(one_valued.qrels_version as integer)
        end as qrels_version
    from one_valued
    left join {{ ref('stg_raw__judgments') }} as judgments
        on one_valued.collection_id = judgments.collection_id
    group by one_valued.collection_id, one_valued.qrels_version
)

select
    one_valued.collection_id,
    cast(one_valued.preset as string) as preset,
    cast(baselines.baseline_run_ids as string) as baseline_run_ids,
    cast(one_valued.relevance_level as integer) as relevance_level,
    cast(one_valued.averaging as string) as averaging,
    cast(one_valued.judged_docs_only as boolean) as judged_docs_only,
    cast(one_valued.ignore_identical_ids as boolean) as ignore_identical_ids,
    cast(case when one_valued.max_docs_per_question <> 'none' then one_valued.max_docs_per_question end as integer)
        as max_docs_per_question,
    cast(one_valued.err_max_grade as integer) as err_max_grade,
    cast(one_valued.rbp_persistence as double) as rbp_persistence,
    cast(versions.qrels_version as integer) as qrels_version,
    cast(one_valued.trec_eval_version as integer) as trec_eval_version,
    -- the rule iprec_at_recall counts a recall level by (macros/measures.sql reads it): trec_eval_version's
    cast(case when one_valued.trec_eval_version = 10 then 'trec_eval_10' else 'trec_eval_9' end as string)
        as iprec_rule,
    cast(one_valued.bootstrap_resamples as integer) as bootstrap_resamples,
    cast(one_valued.bootstrap_seed as bigint) as bootstrap_seed,
    -- keys sorted, separators as Python's json.dumps writes them; a number or yes-or-no bare, none as null
    cast(concat(
        '{'
        {%- for name, json in recorded %},
        '{{ '' if loop.first else ', ' }}"{{ name }}": ',
        {%- set stored = 'recorded_values.recorded_' ~ name %}
        {%- if json == 'list' %}
        concat('[', coalesce(recorded_list_{{ name }}.items, ''), ']')
        {%- elif json == 'version' %}
        cast(versions.qrels_version as string)
        {%- elif json == 'boolean' %}
        case when lower({{ stored }}) = 'true' then 'true' else 'false' end
        {%- elif json == 'number' %}
        case when {{ stored }} is null or lower({{ stored }}) = 'none' then 'null' else {{ stored }} end
        {%- else %}
        case when {{ stored }} is null then 'null' else concat('"', {{ stored }}, '"') end
        {%- endif %}
        {%- endfor %},
        '}'
    ) as string) as evaluation_settings
from one_valued
inner join versions
    on one_valued.collection_id = versions.collection_id
inner join recorded_values
    on one_valued.collection_id = recorded_values.collection_id
left join baselines
    on one_valued.collection_id = baselines.collection_id
{%- for name, json in recorded if json == 'list' %}
left join recorded_list_{{ name }}
    on one_valued.collection_id = recorded_list_{{ name }}.collection_id
{%- endfor %}
