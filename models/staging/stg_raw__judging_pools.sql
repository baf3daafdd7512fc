-- One row per run of a collection's judging pool (`retrieval-metrics pool`): the pool's depth and method.

with source as (
    select * from {{ source('raw', 'judging_pools') }}
),

renamed as (
    select
        cast(collection_id as string) as collection_id,
        cast(run_id as string) as run_id,
        cast(pool_depth as integer) as pool_depth,
        cast(pool_method as string) as pool_method
    from source
)

select * from renamed
