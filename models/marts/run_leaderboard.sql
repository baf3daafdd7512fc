-- One row per (collection, k, run): the run's means, its rank among the collection's runs by NDCG@k, and its
-- difference from the baseline run (var baseline_run_id) of the same collection.

with run_metrics as (
    select * from {{ ref('run_metrics') }}
),

baseline as (
    select * from run_metrics
    where run_id = '{{ var("baseline_run_id") }}'
),

ranked as (
    select
        run_metrics.collection_id,
        run_metrics.k,
        run_metrics.run_id,
        run_metrics.retriever,
        run_metrics.n_questions,
        run_metrics.hit_rate,
        run_metrics.recall,
        run_metrics.precision,
        run_metrics.ndcg,
        run_metrics.mrr,
        run_metrics.map,
        run_metrics.r_precision,
        rank() over (
            partition by run_metrics.collection_id, run_metrics.k
            order by run_metrics.ndcg desc
        ) as ndcg_rank,
        baseline.run_id as baseline_run_id,
        run_metrics.recall - baseline.recall as recall_vs_baseline,
        run_metrics.precision - baseline.precision as precision_vs_baseline,
        run_metrics.ndcg - baseline.ndcg as ndcg_vs_baseline,
        run_metrics.mrr - baseline.mrr as mrr_vs_baseline,
        run_metrics.map - baseline.map as map_vs_baseline
    from run_metrics
    left join baseline
        on run_metrics.collection_id = baseline.collection_id
        and run_metrics.k = baseline.k
)

select
    collection_id,
    k,
    run_id,
    retriever,
    n_questions,
    hit_rate,
    recall,
    precision,
    ndcg,
    mrr,
    map,
    r_precision,
    cast(ndcg_rank as integer) as ndcg_rank,
    baseline_run_id,
    recall_vs_baseline,
    precision_vs_baseline,
    ndcg_vs_baseline,
    mrr_vs_baseline,
    map_vs_baseline
from ranked
