with source as (
    select * from {{ ref('docs') }}
),

renamed as (
    select
        {{ docent_collection_id() }} as collection_id,
        cast(doc_id as varchar) as doc_id,
        cast(title as varchar) as title,
        cast(text as varchar) as doc_text,
        {{ file_row_number() }} as doc_position
    from source
)

select * from renamed
