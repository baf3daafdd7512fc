-- One row per value of a setting a shipped collection comes with (seeds/collection_settings.csv).

with source as (
    select * from {{ ref('collection_settings') }}
),

renamed as (
    select
        cast(collection_id as string) as collection_id,
        cast(setting as string) as setting,
        cast(value as string) as value
    from source
)

select * from renamed
