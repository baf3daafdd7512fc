with source as (
    select * from {{ source('raw', 'runs') }}
),

renamed as (
    select
        cast(collection_id as varchar) as collection_id,
        cast(run_id as varchar) as run_id,
        cast(retriever as varchar) as retriever,
        cast(parameters as varchar) as parameters,
        cast(created_at as timestamp) as created_at
    from source
)

select * from renamed
