with source as (
    select * from {{ source('raw', 'questions') }}
),

renamed as (
    select
        cast(collection_id as string) as collection_id,
        cast(question_id as string) as question_id,
        cast(question_text as string) as question_text
    from source
)

select * from renamed
