with source as (
    select * from {{ ref('golden_questions') }}
),

renamed as (
    select
        {{ docent_collection_id() }} as collection_id,
        cast(question_id as string) as question_id,
        cast(question as string) as question_text
    from source
)

select * from renamed
