with source as (
    select * from {{ ref('docs') }}
),

renamed as (
    select
        {{ docent_collection_id() }} as collection_id,
        cast(doc_id as string) as doc_id,
        cast(title as string) as title,
        cast(text as string) as doc_text,
        {{ file_row_number() }} as doc_position
    from source
)

select * from renamed
