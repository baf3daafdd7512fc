-- One row per value of each per-collection setting (retrieval_metrics/setting_definitions.py) of every collection (with judgments or questions), as its
-- runs are evaluated: the collection's own values from the warehouse (`retrieval-metrics settings`), else from
-- the seed collection_settings, else the dbt var's (the default for every collection without its own; the gate's
-- vars for gated_collection_id only). k_values, gated_run_ids and gated_measures have one row per item (none:
-- nothing gated), baseline_run_id one row per baseline or none (no baseline: no comparisons), every other setting
-- one row. A setting's values all come from one place.
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

{#- every setting's value as its rows store it: k_values' cutoffs one by one, a yes-or-no as true or false -#}
{%- set defaults = [] -%}
{%- for k in cutoff_values() %}{% do defaults.append(('k_values', k)) %}{% endfor -%}
{%- for run_id in baseline_runs() %}{% do defaults.append(('baseline_run_id', run_id)) %}{% endfor -%}
{%- do defaults.extend([
    ('relevance_level', relevance_level()),
    ('averaging', averaging_mode()),
    ('judged_docs_only', judged_docs_only() | string | lower),
    ('ignore_identical_ids', ignore_identical_ids() | string | lower),
    ('max_docs_per_question', max_docs_per_question()),
    ('trec_eval_version', trec_eval_version()),
    ('err_max_grade', err_max_grade()),
    ('rbp_persistence', rbp_persistence()),
    ('qrels_version', qrels_version()),
    ('bootstrap_resamples', integer_var('bootstrap_resamples', 1, 2147483647)),
    ('bootstrap_seed', integer_var('bootstrap_seed', 0, 9223372036854775807)),
    ('min_judge_kappa', min_judge_kappa()),
    ('alpha', significance_level()),
    ('power', design_power()),
    ('hsd_permutations', integer_var('hsd_permutations', 1, 2147483647)),
]) %}
{%- for difference in target_differences() %}{% do defaults.append(('target_differences', difference)) %}{% endfor -%}
{#- the regression gate's runs and measures: the vars', for the collection gated_collection_id only -#}
{%- set gates = [] -%}
{%- for setting in ['gated_run_ids', 'gated_measures'] -%}
    {%- set values = var(setting) -%}
    {%- for value in (values.split(',') if values is string else values) %}{% do gates.append((setting, value | trim)) %}{% endfor -%}
{%- endfor %}

defaults as (
    {%- for setting, value in defaults %}
    select '{{ setting }}' as setting, cast('{{ value }}' as string) as value
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
    where collections.collection_id = {{ sql_string(gated_collection()) }}
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
