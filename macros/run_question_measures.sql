{#- The steps from judged documents to measure values, one macro each, written once for the runs' own models
    (int_questions_judged, int_ideal_rankings, int_run_questions_scaffolded, int_run_questions_measured[_at_k])
    and for int_judge_question_measures, which measures the runs again under the grades an automatic judge and
    people gave the same pairs. `keys` are the extra columns that tell those label sets apart (qrels_version,
    labels), carried into every partition and join after collection_id by key_columns and keys_equal (as in
    judged_docs_ctes); empty for the runs' own models. Every argument naming a relation is a CTE name or a ref. -#}

{#- The extra keys at the head of a column list, "k1, k2, " (each as `alias.k` given an alias); nothing without
    keys. -#}
{% macro key_columns(keys, alias=none) -%}
    {%- for key in keys %}{{ alias ~ '.' if alias }}{{ key }}, {% endfor -%}
{%- endmacro %}

{#- The extra keys as join conditions after the first: " and left.k1 = right.k1 and ...". -#}
{% macro keys_equal(keys, left, right) -%}
    {%- for key in keys %} and {{ left }}.{{ key }} = {{ right }}.{{ key }}{% endfor -%}
{%- endmacro %}

{#- Per (collection, keys, question) of `qrels`: how many docs are judged, how many relevant (grade >= the
    collection's relevance_level), how many judged not relevant (0 <= grade < relevance_level). -#}
{% macro judgment_counts_select(qrels, settings, keys=[]) -%}
    select
        qrels.collection_id,
        {{ key_columns(keys, 'qrels') }}qrels.question_id,
        cast(count(*) as integer) as n_judged,
        cast(sum(case when qrels.relevance >= settings.relevance_level then 1 else 0 end) as integer) as n_relevant,
        cast(sum(case when qrels.relevance >= 0 and qrels.relevance < settings.relevance_level then 1 else 0 end)
            as integer) as n_judged_nonrelevant
    from {{ qrels }} as qrels
    inner join {{ settings }} as settings
        on qrels.collection_id = settings.collection_id
    group by qrels.collection_id, {{ key_columns(keys, 'qrels') }}qrels.question_id
{%- endmacro %}

{#- One row per positive grade of `qrels`, placed where the ideal ranking would put it: highest grade first. -#}
{% macro ideal_rankings_select(qrels, keys=[]) -%}
    select
        collection_id,
        {{ key_columns(keys) }}question_id,
        doc_id,
        relevance,
        cast(row_number() over (
            partition by collection_id, {{ key_columns(keys) }}question_id
            order by relevance desc, doc_id
        ) as integer) as ideal_rank
    from {{ qrels }}
    where relevance > 0
{%- endmacro %}

{#- CTEs ending in `name`: one row per (run, question of `questions`) whether or not the run returned anything
    for it (a question the run missed entirely counts as an empty ranking). Under the collection's settings:
    n_retrieved leaves out the question's own id with ignore_identical_ids and counts at most
    max_docs_per_question (trec_eval -M), n_ranked counts the judged docs only
    with judged_docs_only, and is_averaged follows its averaging. `questions` has n_judged, n_relevant and
    n_judged_nonrelevant per (collection, keys, question); `rankings` and `judged_docs` are the runs' rows. -#}
{% macro run_questions_ctes(name, runs, questions, rankings, judged_docs, settings, keys=[]) -%}
{{ name }}_retrieved_counts as (
    select
        rankings.collection_id,
        rankings.run_id,
        rankings.question_id,
        cast(least(count(*), coalesce(max(settings.max_docs_per_question), count(*))) as integer) as n_retrieved
    from {{ rankings }} as rankings
    inner join {{ settings }} as settings
        on rankings.collection_id = settings.collection_id
    where not (settings.ignore_identical_ids and rankings.doc_id = rankings.question_id)
    group by rankings.collection_id, rankings.run_id, rankings.question_id
),

{{ name }}_judged_counts as (
    select
        collection_id,
        {{ key_columns(keys) }}run_id,
        question_id,
        cast(count(*) as integer) as n_judged_retrieved
    from {{ judged_docs }}
    group by collection_id, {{ key_columns(keys) }}run_id, question_id
),

{{ name }} as (
    select
        runs.collection_id,
        {{ key_columns(keys, 'questions') }}runs.run_id,
        questions.question_id,
        questions.n_judged,
        questions.n_relevant,
        questions.n_judged_nonrelevant,
        coalesce(retrieved_counts.n_retrieved, 0) as n_retrieved,
        case when settings.judged_docs_only
            then coalesce(judged_counts.n_judged_retrieved, 0)
            else coalesce(retrieved_counts.n_retrieved, 0)
        end as n_ranked,
        cast(
            case when settings.averaging = 'retrieved_only'
                then retrieved_counts.n_retrieved is not null and questions.n_judged > 0
                else true
            end
        as boolean) as is_averaged
    from {{ runs }} as runs
    inner join {{ questions }} as questions
        on runs.collection_id = questions.collection_id
    inner join {{ settings }} as settings
        on runs.collection_id = settings.collection_id
    left join {{ name }}_retrieved_counts as retrieved_counts
        on runs.collection_id = retrieved_counts.collection_id
        and runs.run_id = retrieved_counts.run_id
        and questions.question_id = retrieved_counts.question_id
    left join {{ name }}_judged_counts as judged_counts
        on runs.collection_id = judged_counts.collection_id{{ keys_equal(keys, 'questions', 'judged_counts') }}
        and runs.run_id = judged_counts.run_id
        and questions.question_id = judged_counts.question_id
)
{%- endmacro %}

{#- CTEs ending in `name`: one row per (run, question), or per (run, question, k) given `cutoffs` (collection_id,
    k), with every measure of the registry without a cutoff, or with one (macros/measures.sql), one column each,
    over the question's whole ranking or its top k. `run_questions` as run_questions_ctes gives them,
    `judged_docs` as judged_docs_ctes, `ideal_rankings` as ideal_rankings_select; without a cutoff, `settings`
    gives each collection's iprec_rule. -#}
{% macro measured_ctes(name, run_questions, judged_docs, ideal_rankings, settings=none, cutoffs=none, keys=[]) -%}
    {%- set at_k = cutoffs is not none -%}
-- the best ranking possible: the positive grades, highest first{{ ', its top k' if at_k }}
{{ name }}_ideal as (
    select
        ideal.collection_id,
        {{ key_columns(keys, 'ideal') }}ideal.question_id,
        {%- if at_k %}
        cutoffs.k,
        {{ ideal_dcg('cutoffs.k') }} as ideal_dcg,
        {{ ideal_dcg('cutoffs.k', exponential=true) }} as ideal_exp_dcg
        {%- else %}
        {{ ideal_dcg() }} as ideal_dcg,
        cast(count(*) as integer) as ideal_count,
        cast(sum(ideal.relevance) as double) as ideal_gain_sum,
        cast(count(distinct ideal.relevance) as integer) as ideal_levels
        {%- endif %}
    from {{ ideal_rankings }} as ideal
    {%- if at_k %}
    inner join {{ cutoffs }} as cutoffs
        on ideal.collection_id = cutoffs.collection_id
    {%- endif %}
    group by ideal.collection_id, {{ key_columns(keys, 'ideal') }}ideal.question_id
        {{- ', cutoffs.k' if at_k }}
),

{%- if not at_k %}
-- the ideal ranking rank by rank: its gain and DCG down to the rank, and whether a grade ends there (G, ndcg_rel)
{{ name }}_ideal_running as (
    select
        collection_id,
        {{ key_columns(keys) }}question_id,
        ideal_rank,
        cast(sum(relevance) over (
            partition by collection_id, {{ key_columns(keys) }}question_id order by ideal_rank
            rows between unbounded preceding and current row
        ) as double) as ideal_gain_so_far,
        sum(relevance / {{ log2('ideal_rank + 1') }}) over (
            partition by collection_id, {{ key_columns(keys) }}question_id order by ideal_rank
            rows between unbounded preceding and current row
        ) as ideal_dcg_so_far,
        coalesce(lead(relevance) over (
            partition by collection_id, {{ key_columns(keys) }}question_id order by ideal_rank
        ), 0) <> relevance as ends_grade
    from {{ ideal_rankings }}
),

-- Rndcg's weight of a document at this rank: the sum of 1 / ideal DCG at every rank at or below it where a grade
-- of the ideal ranking ends
{{ name }}_ideal_ranks as (
    select
        *,
        coalesce(sum(case when ends_grade then 1.0 / ideal_dcg_so_far end) over (
            partition by collection_id, {{ key_columns(keys) }}question_id order by ideal_rank
            rows between current row and unbounded following
        ), 0.0) as rndcg_weight
    from {{ name }}_ideal_running
),

{% endif -%}
-- the question's constants beside each of its judged documents{{ ' in the top k' if at_k }} (one row of nulls
-- if none): what every measure's SQL in the registry may read
{{ name }}_inputs as (
    select
        run_questions.collection_id,
        {{ key_columns(keys, 'run_questions') }}run_questions.run_id,
        run_questions.question_id,
        {%- if at_k %}
        cutoffs.k,
        coalesce(ideal.ideal_dcg, 0.0) as ideal_dcg,
        coalesce(ideal.ideal_exp_dcg, 0.0) as ideal_exp_dcg,
        {%- else %}
        coalesce(ideal.ideal_dcg, 0.0) as ideal_dcg,
        coalesce(ideal.ideal_count, 0) as ideal_count,
        coalesce(ideal.ideal_gain_sum, 0.0) as ideal_gain_sum,
        coalesce(ideal.ideal_levels, 0) as ideal_levels,
        settings.iprec_rule,
        ideal_ranks.ideal_gain_so_far,
        ideal_ranks.ideal_dcg_so_far,
        ideal_ranks.rndcg_weight,
        {%- set running = 'partition by run_questions.collection_id, ' ~ key_columns(keys, 'run_questions')
            ~ 'run_questions.run_id, run_questions.question_id order by judged_docs.position rows between unbounded preceding and ' %}
        cast(count(judged_docs.position) over ({{ running }}1 preceding) as integer) as judged_above,
        sum(judged_docs.gain) over ({{ running }}current row) as gain_so_far,
        sum(judged_docs.gain / {{ log2('judged_docs.position + 1') }}) over ({{ running }}current row) as dcg_so_far,
        {%- endif %}
        {{ measure_input_columns('run_questions', 'judged_docs') }}
    from {{ run_questions }} as run_questions
    {%- if at_k %}
    inner join {{ cutoffs }} as cutoffs
        on run_questions.collection_id = cutoffs.collection_id
    {%- else %}
    inner join {{ settings }} as settings
        on run_questions.collection_id = settings.collection_id
    {%- endif %}
    left join {{ name }}_ideal as ideal
        on run_questions.collection_id = ideal.collection_id{{ keys_equal(keys, 'run_questions', 'ideal') }}
        and run_questions.question_id = ideal.question_id
        {%- if at_k %}
        and cutoffs.k = ideal.k
        {%- endif %}
    left join {{ judged_docs }} as judged_docs
        on run_questions.collection_id = judged_docs.collection_id{{ keys_equal(keys, 'run_questions', 'judged_docs') }}
        and run_questions.run_id = judged_docs.run_id
        and run_questions.question_id = judged_docs.question_id
        {%- if at_k %}
        and judged_docs.position <= cutoffs.k
        {%- else %}
    left join {{ name }}_ideal_ranks as ideal_ranks
        on run_questions.collection_id = ideal_ranks.collection_id{{ keys_equal(keys, 'run_questions', 'ideal_ranks') }}
        and run_questions.question_id = ideal_ranks.question_id
        and judged_docs.position = ideal_ranks.ideal_rank
        {%- endif %}
),

{{ name }} as (
    select
        collection_id,
        {{ key_columns(keys) }}run_id,
        question_id,
        {%- if at_k %}
        k,
        cast(count(case when is_relevant then 1 end) as integer) as relevant_retrieved_at_k,
        cast({{ linear_dcg() }} as double) as dcg,
        cast(ideal_dcg as double) as ideal_dcg,
        {%- else %}
        cast(min(case when is_relevant then position end) as integer) as first_relevant_rank,
        {%- endif %}
        {%- for measure in measures_at_k(at_k) %}
        cast({{ measure.sql }} as double) as {{ measure.column }}{% if not loop.last %},{% endif %}
        {%- endfor %}
    from {{ name }}_inputs
    group by collection_id, {{ key_columns(keys) }}run_id, question_id, {{ 'k, ' if at_k }}num_rel, num_ret, num_judged_nonrel,
        ideal_dcg, {{ 'ideal_exp_dcg' if at_k else 'ideal_count, ideal_gain_sum, ideal_levels, iprec_rule' }}
)
{%- endmacro %}
