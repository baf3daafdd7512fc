-- One row per value of each per-collection setting (dbt_project.yml's setting_definitions) of every collection
-- (with judgments or questions), as its runs are evaluated: the collection's own values from the warehouse
-- (`retrieval-metrics settings`), else from the seed collection_settings, else the dbt var's (the default for every
-- collection without its own; the gate's vars for gated_collection_id only). A list (k_values, gated_run_ids,
-- gated_measures, target_differences) has one row per item (none: nothing gated), baseline_run_id one row per baseline
-- or none (no baseline: no comparisons), every other setting one row. A setting's values all come from one place.
-- A table, built once per build: the per-run models' hooks (through int_run_fingerprints) and
-- int_collection_evaluation_settings read it, and as a view it took about 10 ms a read on Docent (1 ms as a table).

{{ config(materialized="table") }}

with collections as (
    select collection_id from {{ ref('stg_seeds__golden_qrels') }}
    union
    select collection_id from {{ ref('stg_raw__qrels') }}
    union
    select collection_id from {{ ref('stg_raw__judgments') }}
    union
    select collection_id from {{ ref('int_questions_unioned') }}
),

-- a setting stored under its old name (iprec_rule) is read as its new one (retrieval_metrics/setting_definitions.py)
set_in_warehouse as (
    select
        collection_id,
        case when setting = 'iprec_rule' then 'trec_eval_version' else setting end as setting,
        case
            when setting = 'iprec_rule' and value = 'trec_eval_10' then '10'
            when setting = 'iprec_rule' then '9'
            else value
        end as value,
        'warehouse' as set_by
    from {{ ref('stg_raw__collection_settings') }}
),

set_by_seed as (
    select seeded.collection_id, seeded.setting, seeded.value, 'seed' as set_by
    from {{ ref('stg_seeds__collection_settings') }} as seeded
    where not exists (
        select 1 from set_in_warehouse
        where set_in_warehouse.collection_id = seeded.collection_id and set_in_warehouse.setting = seeded.setting
    )
),

own as (
    select * from set_in_warehouse
    union all
    select * from set_by_seed
),

{#- the default of each setting a collection can have of its own, with a var (dbt_project.yml's setting_definitions),
    as its rows store it: a list's items one by one, a yes-or-no as true or false; the regression gate's (gate)
    for the collection gated_collection_id only -#}
{%- set defaults = [] -%}
{%- set gates = [] -%}
{%- for name, definition in var('setting_definitions').items() if definition.get('scope', 'collection') == 'collection' -%}
    {%- for value in stored_setting(name) -%}
        {%- do (gates if definition.get('gate') else defaults).append((name, value)) -%}
    {%- endfor -%}
{%- endfor %}

defaults as (
    {%- for setting, value in defaults %}
    select '{{ setting }}' as setting, cast({{ sql_string(value) }} as string) as value
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}
),

gate_defaults as (
    {%- for setting, value in gates %}
    select '{{ setting }}' as setting, cast({{ sql_string(value) }} as string) as value
    union all
    {%- endfor %}
    select cast(null as string) as setting, cast(null as string) as value
    where false
),

by_default as (
    select collections.collection_id, defaults.setting, defaults.value, 'var' as set_by
    from collections
    cross join defaults
    where not exists (
        select 1 from own
        where own.collection_id = collections.collection_id and own.setting = defaults.setting
    )
    union all
    select collections.collection_id, gate_defaults.setting, gate_defaults.value, 'var' as set_by
    from collections
    cross join gate_defaults
    where collections.collection_id = {{ sql_string(setting('gated_collection_id')) }}
        and not exists (
            select 1 from own
            where own.collection_id = collections.collection_id and own.setting = gate_defaults.setting
        )
),

settings as (
    select own.collection_id, own.setting, own.value, own.set_by
    from own
    inner join collections
        on own.collection_id = collections.collection_id
    union all
    select collection_id, setting, value, set_by
    from by_default
)

select collection_id, setting, value, set_by
from settings
where not (setting = 'baseline_run_id' and value = 'none')  -- no baseline: no row, so nothing is compared
