-- One row per (collection, automatic judge's qrels version, question, document) that the automatic judge graded
-- and people graded too: the judge's grade beside the people's, which the judges' agreement compares
-- (int_judge_agreement, judge_confusion). The people's grade of a pair is the one the measures would take
-- without any automatic judge: its latest grade from a label file (judge_kind human) up to the collection's
-- qrels version, else its base grade (the seeds, or import --qrels / --beir: assessors' judgments).

with judgments as (
    select * from {{ ref('stg_raw__judgments') }}
),

settings as (
    select collection_id, qrels_version from {{ ref('int_collection_evaluation_settings') }}
),

base as (
    select collection_id, question_id, doc_id, relevance as grade from {{ ref('stg_seeds__golden_qrels') }}
    union all
    select collection_id, question_id, doc_id, relevance as grade from {{ ref('stg_raw__qrels') }}
),

labelled_versions as (
    select
        judgments.collection_id,
        judgments.question_id,
        judgments.doc_id,
        judgments.grade,
        row_number() over (
            partition by judgments.collection_id, judgments.question_id, judgments.doc_id
            order by judgments.qrels_version desc
        ) as recency
    from judgments
    inner join settings
        on judgments.collection_id = settings.collection_id
    where judgments.judge_kind = 'human' and judgments.qrels_version <= settings.qrels_version
),

labelled as (
    select collection_id, question_id, doc_id, grade from labelled_versions where recency = 1
),

people as (
    select
        coalesce(labelled.collection_id, base.collection_id) as collection_id,
        coalesce(labelled.question_id, base.question_id) as question_id,
        coalesce(labelled.doc_id, base.doc_id) as doc_id,
        coalesce(labelled.grade, base.grade) as grade
    from base
    full outer join labelled
        on base.collection_id = labelled.collection_id
        and base.question_id = labelled.question_id
        and base.doc_id = labelled.doc_id
)

select
    judgments.collection_id,
    judgments.qrels_version,
    judgments.judge,
    judgments.question_id,
    judgments.doc_id,
    judgments.grade as judge_grade,
    people.grade as people_grade
from judgments
inner join people
    on judgments.collection_id = people.collection_id
    and judgments.question_id = people.question_id
    and judgments.doc_id = people.doc_id
where judgments.judge_kind = 'automatic'
