{#- A collection's measure instances (its setting `measures`): registry measures with parameters (their entry's
    `instance`, macros/measures.sql), each computed beside the defaults and named as ir_measures prints it:
    RBP(p=0.5), AP(rel=2), nDCG(gains={2:3})@10. retrieval_metrics/measure_instances.py checks and writes them
    before dbt starts; the macros here read them back (int_measure_instances) and compute their values
    (question_measures). -#}

{#- One instance as its setting stores it, parsed against the registry: {"measure_name" (as ir_measures prints
    it), "measure" (the registry entry's name), "k", "p", "rel", "gains" ([grade, gain] pairs),
    "trec_eval_name"}; or the reason it is not one (a string). -#}
{% macro parsed_instance(text) -%}
    {%- set re = modules.re -%}
    {%- set whole = re.fullmatch('([A-Za-z][A-Za-z0-9_]*)(?:[(](.*)[)])?(?:@([0-9]{1,9}))?', text) -%}
    {%- if not whole -%}{{ return('is not Name, Name(parameter=value, ...) or either with @k') }}{%- endif -%}
    {%- set at_k = whole.group(3) is not none -%}
    {%- set entries = [] -%}
    {%- for measure in measure_registry() if measure.instance and measure.at_k == at_k
            and parsed_signature(measure.instance).family == whole.group(1) -%}
        {%- do entries.append(measure) -%}
    {%- endfor -%}
    {%- if not entries -%}
        {{ return('names no measure with parameters' ~ (' at a cutoff' if at_k else ' of the whole ranking')) }}
    {%- endif -%}
    {%- set entry = entries[0] -%}
    {%- set signature = parsed_signature(entry.instance) -%}
    {%- set given = {} -%}
    {%- set listed = whole.group(2) or '' -%}
    {%- for name, value in re.findall('([a-z_]+)=([{][^}]*[}]|[^,]+)', listed) -%}
        {%- do given.update({name: value}) -%}
    {%- endfor -%}
    {%- set parameters = {} -%}
    {%- for parameter in signature.parameters -%}
        {%- set value = given.pop(parameter.name, parameter.default) -%}
        {%- if parameter_problem(parameter.rule, value) -%}
            {{ return('parameter ' ~ parameter.name ~ ': ' ~ parameter_problem(parameter.rule, value)) }}
        {%- endif -%}
        {%- do parameters.update({parameter.name: {"rule": parameter.rule, "value": value, "default": parameter.default}}) -%}
    {%- endfor -%}
    {%- if given -%}
        {{ return('has no parameter ' ~ (given.keys() | sort | first) ~ ' (' ~ entry.instance ~ ')') }}
    {%- endif -%}
    {#- as ir_measures prints it: each parameter not at its default, a gain map without the grades kept as they are;
        and the option trec_eval takes for it (none: trec_eval has no such parameter) -#}
    {%- set base = re.sub('[{](rel|gains|p)[}]', '', entry.trec_eval_instance or '') -%}
    {%- set printed = [] -%}
    {%- set options = [] -%}
    {%- set gains = [] -%}
    {%- for name, parameter in parameters.items() -%}
        {%- if parameter.rule == 'gains' -%}
            {%- for grade, gain in re.findall('([0-9]+):([0-9]+)', parameter.value) -%}
                {%- do gains.append([grade | int, gain | int]) -%}
            {%- endfor -%}
            {%- if gains -%}
                {%- set shown = [] -%}
                {%- set pairs = [] -%}
                {%- for grade, gain in gains | sort(attribute='0') -%}
                    {%- if grade != gain %}{% do shown.append(grade ~ ':' ~ gain) %}{% endif -%}
                    {%- do pairs.append(grade ~ '=' ~ gain) -%}
                {%- endfor -%}
                {%- do printed.append(name ~ '={' ~ shown | join(',') ~ '}') -%}
                {%- do options.append(('{gains}', '-m ' ~ base ~ '.' ~ pairs | join(','))) -%}
            {%- endif -%}
        {%- elif parameter.rule == 'probability' -%}
            {%- if (parameter.value | float) != (parameter.default | float) -%}
                {%- do printed.append(name ~ '=' ~ (parameter.value | float)) -%}
                {%- do options.append(('{' ~ name ~ '}', none)) -%}
            {%- endif -%}
        {%- elif (parameter.value | int) != (parameter.default | int) -%}
            {%- do printed.append(name ~ '=' ~ (parameter.value | int)) -%}
            {%- do options.append(('{' ~ name ~ '}', '-l ' ~ (parameter.value | int))) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set measure_name = whole.group(1) ~ ('(' ~ printed | join(',') ~ ')' if printed else '')
        ~ ('@' ~ (whole.group(3) | int) if at_k else '') -%}
    {#- trec_eval's name where it computes the same: its template with the cutoff, and the options it takes -#}
    {%- set found = namespace(name=entry.trec_eval_instance) -%}
    {%- for placeholder, option in options if not (found.name and placeholder in found.name and option) -%}
        {%- set found.name = none -%}
    {%- endfor -%}
    {%- if found.name -%}
        {%- set shown = options | map(attribute='1') | list -%}
        {%- set found.name = base.replace('{k}', (whole.group(3) | int | string) if at_k else '')
            ~ (' (' ~ shown | join(' ') ~ ')' if shown else '') -%}
    {%- endif -%}
    {%- set trec_eval = found.name -%}
    {{ return({"measure_name": measure_name, "measure": entry.name, "k": whole.group(3) | int if at_k else none,
               "p": parameters.p.value | float if parameters.p else none,
               "rel": parameters.rel.value | int if parameters.rel else none,
               "gains": gains, "trec_eval_name": trec_eval}) }}
{%- endmacro %}

{#- Every collection's instances, read from `settings` (int_collection_settings) when dbt executes, as a select of
    one row per (collection_id, measure_name, grade): grade and gain null, or one row per grade its gains map. A
    bad one (a hand-edited seed: the settings command refuses it) is a compiler error naming the collection and it. -#}
{% macro measure_instances_select(settings) -%}
    {%- set rows = [] -%}
    {%- if execute -%}
        {%- set stored = run_query("select collection_id, value from " ~ settings
            ~ " where setting = 'measures' and value != 'none' order by collection_id, value") -%}
        {%- for collection_id, text in stored.rows -%}
            {%- set instance = parsed_instance(text) -%}
            {%- if instance is string -%}
                {%- do exceptions.raise_compiler_error("collection " ~ tojson(collection_id) ~ ": setting measures: "
                    ~ tojson(text) ~ " " ~ instance) -%}
            {%- endif -%}
            {%- for grade, gain in (instance.gains or [[none, none]]) -%}
                {%- do rows.append([collection_id, instance, grade, gain]) -%}
            {%- endfor -%}
        {%- endfor -%}
    {%- endif -%}
    {%- for collection_id, instance, grade, gain in rows %}
    select
        cast({{ sql_string(collection_id) }} as string) as collection_id,
        cast({{ sql_string(instance.measure_name) }} as string) as measure_name,
        cast({{ sql_string(instance.measure) }} as string) as measure,
        cast({{ instance.k if instance.k is not none else 'null' }} as integer) as k,
        cast({{ instance.p if instance.p is not none else 'null' }} as double) as p,
        cast({{ instance.rel if instance.rel is not none else 'null' }} as integer) as rel,
        cast({{ sql_string(instance.trec_eval_name) if instance.trec_eval_name else 'null' }} as string) as trec_eval_name,
        cast({{ grade if grade is not none else 'null' }} as integer) as grade,
        cast({{ gain if gain is not none else 'null' }} as double) as gain
    union all
    {%- endfor %}
    select
        cast(null as string) as collection_id, cast(null as string) as measure_name, cast(null as string) as measure,
        cast(null as integer) as k, cast(null as double) as p, cast(null as integer) as rel,
        cast(null as string) as trec_eval_name, cast(null as integer) as grade, cast(null as double) as gain
    where 1 = 0
{%- endmacro %}

{#- CTEs ending in `name`: one row per (run, question, instance) with the instance's value, from `run_questions`
    (int_run_questions_scaffolded's rows), `judged_docs` (int_judged_docs_retrieved's), `qrels`
    (int_qrels_unioned), `instances` (int_measure_instances) and `settings` (int_collection_evaluation_settings).
    `user_measures` (int_user_measures) and `user_definitions` (user_measure_definitions) add the SQL measures
    users define, each computed by its own SQL at the collection's settings.
    Each instance reads the inputs its entry's SQL reads (instance_input_columns), recomputed with its parameters:
    relevant at its rel (else the collection's level), gains by its map (a grade not in it gains itself), rbp's
    weights at its p, over its top k; the ideal DCG over the question's grades by the same gains. -#}
{% macro instance_measured_ctes(name, run_questions, judged_docs, qrels, instances, settings, user_measures=none,
                                 user_definitions=[]) -%}
{{ name }}_instances as (
    select distinct collection_id, measure_name, measure, k, p, rel
    from {{ instances }}
    {%- if user_measures %}
    union all
    -- the SQL measures users define (macros/user_measures.sql): over the whole ranking, at the collection's settings
    select
        collection_id, measure_name, measure_name as measure, cast(null as integer) as k, cast(null as double) as p,
        cast(null as integer) as rel
    from {{ user_measures }}
    where kind = 'sql'
    {%- endif %}
),

-- each instance's reading of the question's judgments: relevant at its level, gain by its map
{{ name }}_graded as (
    select
        qrels.collection_id,
        qrels.question_id,
        instances.measure_name,
        qrels.relevance >= coalesce(instances.rel, settings.relevance_level) as is_relevant,
        qrels.relevance,
        cast(greatest(coalesce(gains.gain, qrels.relevance), 0) as double) as gain
    from {{ qrels }} as qrels
    inner join {{ name }}_instances as instances
        on qrels.collection_id = instances.collection_id
    inner join {{ settings }} as settings
        on qrels.collection_id = settings.collection_id
    left join {{ instances }} as gains
        on instances.collection_id = gains.collection_id
        and instances.measure_name = gains.measure_name
        and qrels.relevance = gains.grade
),

{{ name }}_counts as (
    select
        collection_id,
        question_id,
        measure_name,
        cast(sum(case when is_relevant then 1 else 0 end) as integer) as num_rel,
        cast(sum(case when relevance >= 0 and not is_relevant then 1 else 0 end) as integer) as num_judged_nonrel
    from {{ name }}_graded
    group by collection_id, question_id, measure_name
),

-- the ideal ranking by the instance's gains, highest first, and its DCG over the instance's top k
{{ name }}_ideal_ranks as (
    select
        collection_id,
        question_id,
        measure_name,
        gain,
        cast(row_number() over (
            partition by collection_id, question_id, measure_name order by gain desc
        ) as integer) as ideal_rank
    from {{ name }}_graded
    where gain > 0
),

{{ name }}_ideal as (
    select
        ideal.collection_id,
        ideal.question_id,
        ideal.measure_name,
        {{ ordered_sum('case when instances.k is null or ideal.ideal_rank <= instances.k then ideal.gain / '
                       ~ log2('ideal.ideal_rank + 1') ~ ' else 0.0 end', 'ideal.ideal_rank') }} as ideal_dcg
    from {{ name }}_ideal_ranks as ideal
    inner join {{ name }}_instances as instances
        on ideal.collection_id = instances.collection_id
        and ideal.measure_name = instances.measure_name
    group by ideal.collection_id, ideal.question_id, ideal.measure_name
),

-- the question's constants beside each judged document in the instance's top k (one row of nulls if none)
{{ name }}_docs as (
    select
        run_questions.collection_id,
        run_questions.run_id,
        run_questions.question_id,
        instances.measure_name,
        instances.measure,
        instances.k,
        coalesce(counts.num_rel, 0) as num_rel,
        run_questions.n_ranked as num_ret,
        coalesce(counts.num_judged_nonrel, 0) as num_judged_nonrel,
        coalesce(ideal.ideal_dcg, 0.0) as ideal_dcg,
        judged_docs.position,
        judged_docs.relevance,
        judged_docs.relevance >= coalesce(instances.rel, settings.relevance_level) as is_relevant,
        cast(greatest(coalesce(gains.gain, judged_docs.relevance), 0) as double) as gain,
        judged_docs.err_gain,
        judged_docs.rbp_gain,
        judged_docs.err_continue,
        (1.0 - coalesce(instances.p, settings.rbp_persistence))
            * power(coalesce(instances.p, settings.rbp_persistence), judged_docs.position - 1) as rbp_weight
    from {{ run_questions }} as run_questions
    inner join {{ name }}_instances as instances
        on run_questions.collection_id = instances.collection_id
    inner join {{ settings }} as settings
        on run_questions.collection_id = settings.collection_id
    left join {{ name }}_counts as counts
        on run_questions.collection_id = counts.collection_id
        and run_questions.question_id = counts.question_id
        and instances.measure_name = counts.measure_name
    left join {{ name }}_ideal as ideal
        on run_questions.collection_id = ideal.collection_id
        and run_questions.question_id = ideal.question_id
        and instances.measure_name = ideal.measure_name
    left join {{ judged_docs }} as judged_docs
        on run_questions.collection_id = judged_docs.collection_id
        and run_questions.run_id = judged_docs.run_id
        and run_questions.question_id = judged_docs.question_id
        and (instances.k is null or judged_docs.position <= instances.k)
    left join {{ instances }} as gains
        on instances.collection_id = gains.collection_id
        and instances.measure_name = gains.measure_name
        and judged_docs.relevance = gains.grade
),

-- the running counts down the ranking, at the instance's level
{{ name }}_inputs as (
    select
        *,
        cast(sum(case when is_relevant then 1 else 0 end) over (
            partition by collection_id, run_id, question_id, measure_name order by position
            rows between unbounded preceding and current row
        ) as integer) as relevant_so_far,
        cast(coalesce(sum(case when relevance >= 0 and not is_relevant then 1 else 0 end) over (
            partition by collection_id, run_id, question_id, measure_name order by position
            rows between unbounded preceding and 1 preceding
        ), 0) as integer) as nonrelevant_above
    from {{ name }}_docs
),

{{ name }} as (
    select
        collection_id,
        run_id,
        question_id,
        measure,
        k,
        measure_name,
        case
            {%- for measure in measure_registry() if measure.instance %}
            when measure = {{ sql_string(measure.name) }} and k is {{ 'not ' if measure.at_k }}null
                then cast({{ measure.sql }} as double)
            {%- endfor %}
            {{- user_measure_cases(user_definitions) }}
        end as value
    from {{ name }}_inputs
    group by collection_id, run_id, question_id, measure, k, measure_name, num_rel, num_ret, num_judged_nonrel, ideal_dcg
)
{%- endmacro %}
