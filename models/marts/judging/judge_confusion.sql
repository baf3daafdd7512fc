-- One row per (collection, automatic judge's qrels version, judge's grade, people's grade): how many of the
-- pairs both graded got that pair of grades (int_judge_agreement_pairs). The diagonal is agreement.

select
    cast(collection_id as string) as collection_id,
    cast(qrels_version as integer) as qrels_version,
    cast(judge as string) as judge,
    cast(judge_grade as integer) as judge_grade,
    cast(people_grade as integer) as people_grade,
    cast(count(*) as integer) as n_pairs
from {{ ref('int_judge_agreement_pairs') }}
group by collection_id, qrels_version, judge, judge_grade, people_grade
