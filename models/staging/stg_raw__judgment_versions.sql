-- One row per qrels version of a collection (`import --judgments`, `judge`): when, by whom, from what.

with source as (
    select * from {{ source('raw', 'judgment_versions') }}
),

renamed as (
    select
        cast(collection_id as string) as collection_id,
        cast(qrels_version as integer) as qrels_version,
        cast(created_at as timestamp) as created_at,
        cast(judge as string) as judge,
        cast(judge_kind as string) as judge_kind,
        cast(source as string) as judgment_source,
        cast(n_judgments as integer) as n_judgments,
        cast(n_new as integer) as n_new,
        cast(n_changed as integer) as n_changed,
        cast(judge_version as string) as judge_version,
        cast(judge_params as string) as judge_params
    from source
)

select * from renamed
