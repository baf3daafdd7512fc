{#- The dbt vars that change the numbers, each checked once here (see dbt_project.yml and docs/measures.md): the
    defaults of every collection without a setting of its own (int_collection_settings). Each setting is defined
    in retrieval_metrics/setting_definitions.py; tests/python/test_setting_definitions.py checks that the choices,
    minimums, maximums and messages here are its rules'. -#}

{#- Which questions a run's value is taken over: all_questions (trec_eval -c) or retrieved_only (its default). -#}
{% macro averaging_mode() -%}
    {{ return(choice_var('averaging', ['all_questions', 'retrieved_only'])) }}
{%- endmacro %}

{#- The trec_eval whose numbers to give: 9 (pytrec_eval's: 32-bit scores, iprec's (long)(level * R + 0.9)) or 10
    (double scores, lround). The ranks follow it when runs are written (retrieval_metrics/tie_rules.py). -#}
{% macro trec_eval_version() -%}
    {{ return(choice_var('trec_eval_version', ['9', '10'])) }}
{%- endmacro %}

{#- The lowest grade that counts as relevant (trec_eval -l, pytrec_eval relevance_level). -#}
{% macro relevance_level() -%}
    {{ return(integer_var('relevance_level', 0, 2147483647)) }}
{%- endmacro %}

{#- Judged-only evaluation (trec_eval -J): documents without a grade >= 0 are dropped from the ranking. -#}
{% macro judged_docs_only() -%}
    {{ return(boolean_var('judged_docs_only')) }}
{%- endmacro %}

{#- BEIR's ignore_identical_ids: a retrieved document whose id is the question's is dropped from the ranking. -#}
{% macro ignore_identical_ids() -%}
    {{ return(boolean_var('ignore_identical_ids')) }}
{%- endmacro %}

{#- trec_eval -M: the most documents of each ranking measured (its top ones), or none: every one. -#}
{% macro max_docs_per_question() -%}
    {%- set text = var('max_docs_per_question') | string | trim | lower -%}
    {%- if text == 'none' -%}{{ return(text) }}{%- endif -%}
    {%- if not text.isdigit() or (text | int) < 1 or (text | int) > 2147483647 -%}
        {{ exceptions.raise_compiler_error("var max_docs_per_question: " ~ text ~ " is not none or an integer from 1 to 2147483647") }}
    {%- endif -%}
    {{ return(text | int) }}
{%- endmacro %}

{#- A var that is one of `choices`, compared as text (a YAML 10 is '10'). -#}
{% macro choice_var(name, choices) -%}
    {%- set value = var(name) | string | trim -%}
    {%- if value not in choices -%}
        {{ exceptions.raise_compiler_error("var " ~ name ~ ": " ~ value ~ " is not one of " ~ choices | join(", ")) }}
    {%- endif -%}
    {{ return(value) }}
{%- endmacro %}

{% macro boolean_var(name) -%}
    {%- set value = var(name) -%}
    {%- if value is string and value | lower in ['true', 'false'] -%}
        {%- set value = value | lower == 'true' -%}
    {%- endif -%}
    {%- if value is not sameas true and value is not sameas false -%}
        {{ exceptions.raise_compiler_error("var " ~ name ~ ": " ~ value ~ " is not true or false") }}
    {%- endif -%}
    {{ return(value) }}
{%- endmacro %}

{#- ERR's grade scale: a document of grade g stops the user with probability (2^g - 1) / 2^err_max_grade
    (gdeval's MAX_JUDGMENT, 4). Higher grades count as err_max_grade. -#}
{% macro err_max_grade() -%}
    {{ return(integer_var('err_max_grade', 1, 2147483647)) }}
{%- endmacro %}

{#- rbp and rbp_resid's persistence: the reader goes on to the next document with probability p, 0 < p < 1. -#}
{% macro rbp_persistence() -%}
    {%- set text = var('rbp_persistence') | string | trim -%}
    {%- set number = text | float(-1) -%}
    {%- if not (0 < number < 1) -%}
        {{ exceptions.raise_compiler_error("var rbp_persistence: " ~ text ~ " is not a number between 0 and 1 (exclusive)") }}
    {%- endif -%}
    {{ return(number) }}
{%- endmacro %}

{#- The qrels version the measures use: latest, or a version number (0: the base judgments). -#}
{% macro qrels_version() -%}
    {%- set text = var('qrels_version') | string | trim | lower -%}
    {%- if text != 'latest' and not text.isdigit() -%}
        {{ exceptions.raise_compiler_error("var qrels_version: " ~ text ~ " is not latest or a version number >= 0") }}
    {%- endif -%}
    {{ return(text if text == 'latest' else text | int) }}
{%- endmacro %}

{#- The runs every run of a collection is compared with (each with each baseline but itself), by run id: a list
    ("a,b" or [a, b]), or ['none'] for none (also an empty var): no comparisons. -#}
{% macro baseline_runs() -%}
    {%- set value = var('baseline_run_id') -%}
    {%- set items = value.split(',') if value is string else (value if value is sequence else [value]) -%}
    {%- set found = [] -%}
    {%- for item in items %}{% do found.append('' if item is none else item | string | trim) %}{% endfor -%}
    {%- if found | length == 1 and found[0] | lower in ['', 'none'] -%}{{ return(['none']) }}{%- endif -%}
    {%- set seen = [] -%}
    {%- for item in found -%}
        {%- if item | lower == 'none' or not modules.re.fullmatch('[A-Za-z0-9][A-Za-z0-9_.-]*', item) -%}
            {{ exceptions.raise_compiler_error("var baseline_run_id: " ~ value ~ " is not none or a list of run ids") }}
        {%- elif item in seen -%}
            {{ exceptions.raise_compiler_error("var baseline_run_id: " ~ value ~ " names " ~ item ~ " twice") }}
        {%- endif -%}
        {%- do seen.append(item) -%}
    {%- endfor -%}
    {{ return(found | sort) }}
{%- endmacro %}

{#- The collection the regression gate's vars (gated_run_ids, gated_measures) apply to. -#}
{% macro gated_collection() -%}
    {%- set text = var('gated_collection_id') | string | trim -%}
    {%- if not modules.re.fullmatch('[A-Za-z0-9][A-Za-z0-9_.-]*', text) -%}
        {{ exceptions.raise_compiler_error("var gated_collection_id: " ~ text ~ " is not a run or collection id") }}
    {%- endif -%}
    {{ return(text) }}
{%- endmacro %}

{#- The judge gate: none, or the Cohen's kappa an automatic judge must reach (-1 to 1), as its setting stores it. -#}
{% macro min_judge_kappa() -%}
    {%- set text = var('min_judge_kappa') | string | trim | lower -%}
    {%- if text == 'none' -%}{{ return(text) }}{%- endif -%}
    {%- set number = text | float(-2) -%}
    {%- if not (-1 <= number <= 1) -%}
        {{ exceptions.raise_compiler_error("var min_judge_kappa: " ~ text ~ " is not none or a number from -1 to 1") }}
    {%- endif -%}
    {{ return(number) }}
{%- endmacro %}

{#- An integer var >= minimum (and, given, <= maximum: what its column holds). -#}
{% macro integer_var(name, minimum, maximum=none) -%}
    {%- set text = var(name) | string | trim -%}
    {%- set digits = text[1:] if text.startswith('-') else text -%}
    {%- if not digits.isdigit() or (text | int) < minimum -%}
        {{ exceptions.raise_compiler_error("var " ~ name ~ ": " ~ text ~ " is not an integer >= " ~ minimum) }}
    {%- endif -%}
    {%- if maximum is not none and (text | int) > maximum -%}
        {{ exceptions.raise_compiler_error("var " ~ name ~ ": " ~ text ~ " is more than " ~ maximum) }}
    {%- endif -%}
    {{ return(text | int) }}
{%- endmacro %}

{#- The all-pairs tests' significance level and the topic set size design's power: each 0 < p < 1. -#}
{% macro significance_level() -%}
    {%- set text = var('alpha') | string | trim -%}
    {%- set number = text | float(-1) -%}
    {%- if not (0 < number < 1) -%}
        {{ exceptions.raise_compiler_error("var alpha: " ~ text ~ " is not a number between 0 and 1 (exclusive)") }}
    {%- endif -%}
    {{ return(number) }}
{%- endmacro %}

{% macro design_power() -%}
    {%- set text = var('power') | string | trim -%}
    {%- set number = text | float(-1) -%}
    {%- if not (0 < number < 1) -%}
        {{ exceptions.raise_compiler_error("var power: " ~ text ~ " is not a number between 0 and 1 (exclusive)") }}
    {%- endif -%}
    {{ return(number) }}
{%- endmacro %}

{#- The differences the topic set size design sizes: a list (or "0.02,0.05") of positive numbers. -#}
{% macro target_differences() -%}
    {%- set raw = var('target_differences') -%}
    {%- set text = raw | string -%}
    {%- set raw = raw.split(',') if raw is string else ([raw] if raw is number else raw) -%}
    {%- set found = [] -%}
    {%- for value in raw -%}
        {%- set number = (value | string | trim) | float(-1) -%}
        {%- if number > 0 -%}{%- do found.append(number) -%}{%- endif -%}
    {%- endfor -%}
    {%- if found | length == 0 or found | length != raw | length -%}
        {{ exceptions.raise_compiler_error("var target_differences: " ~ text ~ " is not a list of positive numbers") }}
    {%- endif -%}
    {{ return(found | unique | sort) }}
{%- endmacro %}
