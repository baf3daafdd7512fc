-- One row per value of each per-collection setting of every collection (with judgments or questions), as its
-- runs are evaluated: the collection's own values from the warehouse (`retrieval-metrics settings`), else from
-- the seed collection_settings, else the dbt var's (the default for every collection without its own). k_values
-- has one row per cutoff, every other setting one row. A setting's values all come from one place.

with collections as (
    select collection_id from {{ ref('int_qrels_unioned') }}
    union
    select collection_id from {{ ref('int_questions_unioned') }}
),

set_in_warehouse as (
    select collection_id, setting, value, 'warehouse' as set_by from {{ ref('stg_raw__collection_settings') }}
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

defaults as (
    {%- for k in cutoff_values() %}
    select 'k_values' as setting, cast({{ k }} as string) as value
    union all
    {%- endfor %}
    select 'baseline_run_id' as setting, cast('{{ var("baseline_run_id") }}' as string) as value
    union all
    select 'relevance_level' as setting, cast('{{ relevance_level() }}' as string) as value
    union all
    select 'averaging' as setting, cast('{{ averaging_mode() }}' as string) as value
    union all
    select 'judged_docs_only' as setting, cast('{{ judged_docs_only() | lower }}' as string) as value
    union all
    select 'ignore_identical_ids' as setting, cast('{{ ignore_identical_ids() | lower }}' as string) as value
    union all
    select 'iprec_rule' as setting, cast('{{ iprec_rule() }}' as string) as value
    union all
    select 'err_max_grade' as setting, cast('{{ err_max_grade() }}' as string) as value
),

by_default as (
    select collections.collection_id, defaults.setting, defaults.value, 'var' as set_by
    from collections
    cross join defaults
    where not exists (
        select 1 from own
        where own.collection_id = collections.collection_id and own.setting = defaults.setting
    )
)

select own.collection_id, own.setting, own.value, own.set_by
from own
inner join collections
    on own.collection_id = collections.collection_id
union all
select collection_id, setting, value, set_by
from by_default
