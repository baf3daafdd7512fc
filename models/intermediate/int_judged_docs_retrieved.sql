-- One row per judged document a run retrieved for a question (any grade, negative included): the only ranking
-- rows the measures read, with the running counts they need at the document's position.
-- Computed per run: only the runs this build plans (macros/incremental_runs.sql), as in every per-run model.
-- Under the collection's settings: is_relevant at its relevance_level, ERR's gains on its err_max_grade scale, and
-- with judged_docs_only (trec_eval -J) documents without a grade >= 0 dropped and the rest re-ranked 1, 2, ...,
-- and with ignore_identical_ids (BEIR) the document whose id is the question's dropped and those below moved up;
-- rbp's weights at its rbp_persistence.

with rankings as (
    {{ rows_of_planned_runs(ref('stg_raw__rankings')) }}
),

qrels as (
    select * from {{ ref('int_qrels_unioned') }}
),

settings as (
    select * from {{ ref('int_collection_evaluation_settings') }}
),

-- rbp's gain scale, as trec_eval's: the question's highest grade (>= 0) among its judgments
grade_scales as (
    select collection_id, question_id, max(relevance) as max_grade
    from qrels
    where relevance >= 0
    group by collection_id, question_id
),

-- under ignore_identical_ids: the rank of the question's own id in the ranking (a few rows at most)
identical as (
    select rankings.collection_id, rankings.run_id, rankings.question_id, rankings.rank
    from rankings
    inner join settings
        on rankings.collection_id = settings.collection_id
    where settings.ignore_identical_ids and rankings.doc_id = rankings.question_id
),

kept as (
    select
        rankings.collection_id,
        rankings.run_id,
        rankings.question_id,
        rankings.doc_id,
        rankings.rank,
        rankings.rank - case when identical.rank < rankings.rank then 1 else 0 end as kept_rank,
        rankings.matched_terms
    from rankings
    left join identical
        on rankings.collection_id = identical.collection_id
        and rankings.run_id = identical.run_id
        and rankings.question_id = identical.question_id
    where identical.rank is null or identical.rank <> rankings.rank
),

joined as (
    select
        kept.collection_id,
        kept.run_id,
        kept.question_id,
        kept.doc_id,
        kept.rank,
        kept.kept_rank,
        kept.matched_terms,
        qrels.relevance,
        settings.judged_docs_only,
        settings.relevance_level,
        settings.err_max_grade,
        settings.rbp_persistence,
        grade_scales.max_grade
    from kept
    inner join qrels
        on kept.collection_id = qrels.collection_id
        and kept.question_id = qrels.question_id
        and kept.doc_id = qrels.doc_id
    inner join settings
        on kept.collection_id = settings.collection_id
    left join grade_scales
        on kept.collection_id = grade_scales.collection_id
        and kept.question_id = grade_scales.question_id
    where qrels.relevance >= 0 or not settings.judged_docs_only
),

graded as (
    select
        *,
        case when judged_docs_only
            then cast(row_number() over (partition by collection_id, run_id, question_id order by rank) as integer)
            else kept_rank
        end as position,
        relevance >= relevance_level as is_relevant,
        cast(greatest(relevance, 0) as double) as gain,
        case when relevance > 0
            then (power(2.0, least(relevance, err_max_grade)) - 1.0) / power(2.0, err_max_grade)
            else 0.0
        end as err_gain,
        case
            when relevance <= 0 then 0.0
            when max_grade > 1 then cast(relevance as double) / max_grade
            else cast(relevance as double)
        end as rbp_gain
    from joined
),

counted as (
    select
        *,
        cast(sum(case when is_relevant then 1 else 0 end) over (
            partition by collection_id, run_id, question_id order by position
            rows between unbounded preceding and current row
        ) as integer) as relevant_so_far,
        cast(coalesce(sum(case when relevance >= 0 and not is_relevant then 1 else 0 end) over (
            partition by collection_id, run_id, question_id order by position
            rows between unbounded preceding and 1 preceding
        ), 0) as integer) as nonrelevant_above,
        (1.0 - rbp_persistence) * power(rbp_persistence, position - 1) as rbp_weight,
        coalesce({{ product_over('1.0 - err_gain',
            'partition by collection_id, run_id, question_id order by position
            rows between unbounded preceding and 1 preceding') }}, 1.0) as err_continue
    from graded
)

select
    collection_id,
    run_id,
    question_id,
    doc_id,
    rank,
    position,
    matched_terms,
    relevance,
    is_relevant,
    gain,
    err_gain,
    rbp_gain,
    rbp_weight,
    relevant_so_far,
    nonrelevant_above,
    err_continue
from counted
