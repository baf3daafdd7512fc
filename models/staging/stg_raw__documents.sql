with source as (
    select * from {{ source('raw', 'documents') }}
),

renamed as (
    select
        cast(collection_id as string) as collection_id,
        cast(doc_id as string) as doc_id,
        cast(title as string) as title,
        cast(doc_text as string) as doc_text,
        row_number() over (partition by collection_id order by doc_id) as doc_position
    from source
)

select * from renamed
