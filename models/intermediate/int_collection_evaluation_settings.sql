-- One row per collection (with judgments or questions): the settings its runs are evaluated under
-- (retrieval_metrics/setting_definitions.py), one column each (int_collection_settings' rows side by side, but the gate's lists; the
-- baselines as one list), and those that change the values as
-- the JSON that run_measures records (the bootstrap's resamples and seed change only the intervals).
-- A table, built once per build: every per-run model reads it, and as a view its pivot took about 75 ms a read on
-- Docent (1 ms as a table).

{{ config(materialized="table") }}

with settings as (
    select * from {{ ref('int_collection_settings') }}
),

cutoffs as (
    select
        collection_id,
        {{ ordered_string_agg('value', ', ', 'cast(value as integer)') }} as k_list
    from settings
    where setting = 'k_values'
    group by collection_id
),

baselines as (
    select
        collection_id,
        {{ ordered_string_agg('value', ', ', 'value') }} as baseline_run_ids
    from settings
    where setting = 'baseline_run_id'
    group by collection_id
),

one_valued as (
    select
        collection_id,
        max(case when setting = 'preset' then value end) as preset,
        max(case when setting = 'relevance_level' then cast(value as integer) end) as relevance_level,
        max(case when setting = 'averaging' then value end) as averaging,
        max(case when setting = 'judged_docs_only' then value end) = 'true' as judged_docs_only,
        max(case when setting = 'ignore_identical_ids' then value end) = 'true' as ignore_identical_ids,
        -- int_collection_settings lists a collection's own value; without one, the var's
        coalesce(max(case when setting = 'max_docs_per_question' then value end), '{{ max_docs_per_question() }}')
            as max_docs_per_question,
        max(case when setting = 'err_max_grade' then cast(value as integer) end) as err_max_grade,
        max(case when setting = 'rbp_persistence' then value end) as rbp_persistence,
        max(case when setting = 'qrels_version' then value end) as qrels_version,
        max(case when setting = 'trec_eval_version' then cast(value as integer) end) as trec_eval_version,
        max(case when setting = 'bootstrap_resamples' then cast(value as integer) end) as bootstrap_resamples,
        max(case when setting = 'bootstrap_seed' then cast(value as bigint) end) as bootstrap_seed
    from settings
    where setting not in ('k_values', 'baseline_run_id', 'gated_run_ids', 'gated_measures')
    group by collection_id
),

-- the qrels version the measures use: the collection's latest for latest (0 before any import --judgments), else
-- the one named
versions as (
    select
        one_valued.collection_id,
        case
            when one_valued.qrels_version = 'latest' then coalesce(max(judgments.qrels_version), 0)
            else cast(one_valued.qrels_version as integer)
        end as qrels_version
    from one_valued
    left join {{ ref('stg_raw__judgments') }} as judgments
        on one_valued.collection_id = judgments.collection_id
    group by one_valued.collection_id, one_valued.qrels_version
)

select
    one_valued.collection_id,
    cast(one_valued.preset as string) as preset,
    cast(baselines.baseline_run_ids as string) as baseline_run_ids,
    cast(one_valued.relevance_level as integer) as relevance_level,
    cast(one_valued.averaging as string) as averaging,
    cast(one_valued.judged_docs_only as boolean) as judged_docs_only,
    cast(one_valued.ignore_identical_ids as boolean) as ignore_identical_ids,
    cast(case when one_valued.max_docs_per_question <> 'none' then one_valued.max_docs_per_question end as integer)
        as max_docs_per_question,
    cast(one_valued.err_max_grade as integer) as err_max_grade,
    cast(one_valued.rbp_persistence as double) as rbp_persistence,
    cast(versions.qrels_version as integer) as qrels_version,
    cast(one_valued.trec_eval_version as integer) as trec_eval_version,
    -- the rule iprec_at_recall counts a recall level by (macros/measures.sql reads it): trec_eval_version's
    cast(case when one_valued.trec_eval_version = 10 then 'trec_eval_10' else 'trec_eval_9' end as string)
        as iprec_rule,
    cast(one_valued.bootstrap_resamples as integer) as bootstrap_resamples,
    cast(one_valued.bootstrap_seed as bigint) as bootstrap_seed,
    -- keys sorted, separators as Python's json.dumps writes them
    cast(concat(
        '{"averaging": "', one_valued.averaging,
        '", "err_max_grade": ', cast(one_valued.err_max_grade as string),
        ', "ignore_identical_ids": ', case when one_valued.ignore_identical_ids then 'true' else 'false' end,
        ', "judged_docs_only": ', case when one_valued.judged_docs_only then 'true' else 'false' end,
        ', "k_values": [', cutoffs.k_list,
        '], "max_docs_per_question": ',
        case when one_valued.max_docs_per_question = 'none' then 'null' else one_valued.max_docs_per_question end,
        ', "preset": ', case when one_valued.preset is null then 'null' else concat('"', one_valued.preset, '"') end,
        ', "qrels_version": ', cast(versions.qrels_version as string),
        ', "rbp_persistence": ', one_valued.rbp_persistence,
        ', "relevance_level": ', cast(one_valued.relevance_level as string),
        ', "trec_eval_version": ', cast(one_valued.trec_eval_version as string), '}'
    ) as string) as evaluation_settings
from one_valued
inner join cutoffs
    on one_valued.collection_id = cutoffs.collection_id
inner join versions
    on one_valued.collection_id = versions.collection_id
left join baselines
    on one_valued.collection_id = baselines.collection_id
