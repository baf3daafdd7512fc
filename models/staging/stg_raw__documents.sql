with source as (
    select * from {{ source('raw', 'documents') }}
),

renamed as (
    select
        cast(collection_id as varchar) as collection_id,
        cast(doc_id as varchar) as doc_id,
        cast(title as varchar) as title,
        cast(doc_text as varchar) as doc_text,
        row_number() over (partition by collection_id order by doc_id) as doc_position
    from source
)

select * from renamed
