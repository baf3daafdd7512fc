-- One row per (collection, run, k, question, relevant doc) where the relevant doc is NOT in the run's top k:
-- where it sits instead, which docs outranked it, and what the question's shortfall costs the run's means.

with runs_to_compute as (
    {{ runs_to_compute(given_runs=ref('question_metrics')) }}
),

question_metrics as (
    {{ rows_of_runs(ref('question_metrics')) }}
),

run_metrics as (
    {{ rows_of_runs(ref('run_metrics')) }}
),

questions as (
    select * from {{ ref('int_questions_judged') }}
),

relevant_judgments as (  -- at the collection's relevance level
    select qrels.*
    from {{ ref('int_qrels_unioned') }} as qrels
    inner join {{ ref('int_collection_evaluation_settings') }} as settings
        on qrels.collection_id = settings.collection_id
    where qrels.relevance >= settings.relevance_level
),

judged_retrieved as (
    {{ rows_of_runs(ref('int_judged_docs_retrieved')) }}
),

rankings as (
    {{ rows_of_runs(ref('stg_raw__rankings')) }}
),

relevant_docs_at_k as (
    select
        question_metrics.collection_id,
        question_metrics.run_id,
        question_metrics.k,
        question_metrics.question_id,
        question_metrics.n_retrieved,
        question_metrics.recall as question_recall,
        question_metrics.ndcg as question_ndcg,
        question_metrics.is_averaged,
        relevant_judgments.doc_id,
        relevant_judgments.relevance
    from question_metrics
    inner join relevant_judgments
        on question_metrics.collection_id = relevant_judgments.collection_id
        and question_metrics.question_id = relevant_judgments.question_id
),

missed as (
    select
        relevant_docs_at_k.*,
        judged_retrieved.rank as doc_rank,
        judged_retrieved.matched_terms as doc_matched_terms
    from relevant_docs_at_k
    left join judged_retrieved
        on relevant_docs_at_k.collection_id = judged_retrieved.collection_id
        and relevant_docs_at_k.run_id = judged_retrieved.run_id
        and relevant_docs_at_k.question_id = judged_retrieved.question_id
        and relevant_docs_at_k.doc_id = judged_retrieved.doc_id
    -- beyond k where the measures count (position: the rank among judged docs under judged_docs_only)
    where judged_retrieved.position is null or judged_retrieved.position > relevant_docs_at_k.k
),

-- for each rank r <= the listing cap: the docs at ranks 1..r, best first (one short row per listed rank,
-- so a missed doc at rank d picks the row r = d - 1 instead of aggregating its own copy of them)
outranking_prefixes as (
    select
        collection_id,
        run_id,
        question_id,
        rank,
        {{ running_string_agg('doc_id', ', ', 'collection_id, run_id, question_id', 'rank') }} as outranking_doc_ids,
        {{ running_string_agg(
            "doc_id || coalesce(' [' || matched_terms || ']', '')", '; ', 'collection_id, run_id, question_id', 'rank'
        ) }} as outranking_matches
    from rankings
    where rank <= {{ setting('max_outranking_docs_listed') }}
),

outranking as (
    select
        missed.collection_id,
        missed.run_id,
        missed.k,
        missed.question_id,
        missed.doc_id,
        outranking_prefixes.outranking_doc_ids,
        outranking_prefixes.outranking_matches
    from missed
    inner join outranking_prefixes
        on missed.collection_id = outranking_prefixes.collection_id
        and missed.run_id = outranking_prefixes.run_id
        and missed.question_id = outranking_prefixes.question_id
        -- all the docs above the missed one (all the run returned, if it never returned it), capped
        and outranking_prefixes.rank = least(
            coalesce(missed.doc_rank - 1, missed.n_retrieved), {{ setting('max_outranking_docs_listed') }}
        )
),

computed_rows as (
    select
        missed.collection_id,
        missed.run_id,
        missed.k,
        missed.question_id,
        questions.question_text,
        missed.doc_id,
        missed.relevance,
        missed.doc_rank,
        cast(coalesce(missed.doc_rank - 1, missed.n_retrieved) as integer) as n_outranking_docs,
        outranking.outranking_doc_ids,
        missed.doc_matched_terms,
        outranking.outranking_matches,
        missed.doc_id
            || coalesce(' (rank ' || cast(missed.doc_rank as string) || ')', ' (not retrieved)')
            || coalesce(' [' || missed.doc_matched_terms || ']', '')
            || coalesce(' was outranked by ' || outranking.outranking_matches, '') as explanation,
        missed.question_recall,
        missed.question_ndcg,
        run_metrics.n_questions,
        run_metrics.recall as run_recall,
        run_metrics.ndcg as run_ndcg,
        cast(case when missed.is_averaged then (1.0 - missed.question_recall) / run_metrics.n_questions end as double)
            as recall_cost,
        -- recovered from the rounded mean, so held in [0, 1]
        cast(case when missed.is_averaged and run_metrics.n_questions > 1 then {{ clamped(
            '(run_metrics.recall * run_metrics.n_questions - missed.question_recall) / (run_metrics.n_questions - 1)',
            0.0, 1.0) }}
        end as double) as run_recall_without_question,
        cast(case when missed.is_averaged then (1.0 - missed.question_ndcg) / run_metrics.n_questions end as double)
            as ndcg_cost
    from missed
    inner join questions
        on missed.collection_id = questions.collection_id
        and missed.question_id = questions.question_id
    inner join run_metrics
        on missed.collection_id = run_metrics.collection_id
        and missed.run_id = run_metrics.run_id
        and missed.k = run_metrics.k
    left join outranking
        on missed.collection_id = outranking.collection_id
        and missed.run_id = outranking.run_id
        and missed.k = outranking.k
        and missed.question_id = outranking.question_id
        and missed.doc_id = outranking.doc_id
)

select
    computed_rows.*,
    {{ computed_columns() }}
from computed_rows
inner join runs_to_compute
    on computed_rows.collection_id = runs_to_compute.collection_id
    and computed_rows.run_id = runs_to_compute.run_id
