-- One row per measure of the registry (macros/measures.sql): its names, cutoff, aggregation, parameters, inputs
-- and formula, so that readers (the report, the exports, a BI tool) loop over it instead of listing measures.
-- Then one row per measure users define (int_user_measures; a name two collections define: the first's), reference
-- user, averaged by the mean and compared.

-- depends_on: {{ ref('int_user_measures') }}

{%- for measure in measure_registry() %}
select
    cast({{ loop.index }} as integer) as measure_position,
    cast({{ sql_string(measure.name) }} as string) as measure,
    cast({{ 'true' if measure.at_k else 'false' }} as boolean) as takes_cutoff,
    cast({{ sql_string(measure.reference) }} as string) as reference,
    cast({{ sql_string(measure.aggregation) }} as string) as aggregation,
    cast({{ 'true' if measure.compared else 'false' }} as boolean) as is_compared,
    cast({{ 'false' if measure.get('uses_relevance_level') is sameas false else 'true' }} as boolean)
        as uses_relevance_level,
    cast({{ sql_string(measure.question_metrics_column) if measure.question_metrics_column else 'null' }} as string)
        as question_metrics_column,
    cast({{ sql_string(measure.run_metrics_column) if measure.run_metrics_column else 'null' }} as string)
        as run_metrics_column,
    cast({{ 'false' if measure.by_default is sameas false else 'true' }} as boolean) as is_default,
    cast({{ sql_string(measure.instance) if measure.instance else 'null' }} as string) as parameters,
    cast({{ sql_string(measure.inputs | join(', ')) }} as string) as inputs,
    cast({{ sql_string(measure.description) }} as string) as description
{%- if not loop.last %}
union all
{%- endif %}
{%- endfor %}
{%- set listed = [] %}
{%- for definition in user_measure_definitions(ref('int_collection_settings')) if definition.name not in listed %}
{%- do listed.append(definition.name) %}
{%- set inputs = [] %}
{%- for column in measure_inputs() if definition.kind == 'sql' and modules.re.search('\\b' ~ column ~ '\\b', definition.sql) %}
{%- do inputs.append(column) %}
{%- endfor %}
union all
select
    cast({{ 1000 + listed | length }} as integer) as measure_position,
    cast({{ sql_string(definition.name) }} as string) as measure,
    cast(false as boolean) as takes_cutoff,
    cast('user' as string) as reference,
    cast('mean' as string) as aggregation,
    cast(true as boolean) as is_compared,
    cast(true as boolean) as uses_relevance_level,
    cast(null as string) as question_metrics_column,
    cast(null as string) as run_metrics_column,
    cast(false as boolean) as is_default,
    cast(null as string) as parameters,
    cast({{ sql_string(inputs | join(', ') if definition.kind == 'sql' else 'qrels, run (Python: ' ~ definition.function ~ ')') }} as string) as inputs,
    cast({{ sql_string(definition.description or definition.name) }} as string) as description
{%- endfor %}
