-- One row per (question, tag) of the lesson's golden questions (seeds/golden_question_tags.csv): collection docent.

with source as (
    select * from {{ ref('golden_question_tags') }}
),

renamed as (
    select
        {{ docent_collection_id() }} as collection_id,
        cast(question_id as string) as question_id,
        cast(tag as string) as tag
    from source
)

select * from renamed
