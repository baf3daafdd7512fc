with source as (
    select * from {{ source('raw', 'questions') }}
),

renamed as (
    select
        cast(collection_id as varchar) as collection_id,
        cast(question_id as varchar) as question_id,
        cast(question_text as varchar) as question_text
    from source
)

select * from renamed
