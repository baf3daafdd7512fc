-- One row per relevant document a run retrieved for a question: the only ranking rows the measures need.
-- n_relevant_up_to_rank counts the relevant docs at this rank or above (for average precision).

with rankings as (
    select * from {{ ref('stg_raw__rankings') }}
),

relevant_judgments as (
    select * from {{ ref('int_relevant_judgments_ranked') }}
),

joined as (
    select
        rankings.collection_id,
        rankings.run_id,
        rankings.question_id,
        rankings.doc_id,
        rankings.rank,
        rankings.matched_terms,
        relevant_judgments.relevance
    from rankings
    inner join relevant_judgments
        on rankings.collection_id = relevant_judgments.collection_id
        and rankings.question_id = relevant_judgments.question_id
        and rankings.doc_id = relevant_judgments.doc_id
),

counted as (
    select
        *,
        cast(row_number() over (
            partition by collection_id, run_id, question_id
            order by rank
        ) as integer) as n_relevant_up_to_rank
    from joined
)

select * from counted
