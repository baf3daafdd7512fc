-- One row per value of a setting a collection was given in the warehouse (`retrieval-metrics settings`).

with source as (
    select * from {{ source('raw', 'collection_settings') }}
),

renamed as (
    select
        cast(collection_id as string) as collection_id,
        cast(setting as string) as setting,
        cast(value as string) as value
    from source
)

select * from renamed
