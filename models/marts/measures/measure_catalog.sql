-- One row per measure of the registry (macros/measures.sql): its names, cutoff, aggregation, parameters, inputs
-- and formula, so that readers (the report, the exports, a BI tool) loop over it instead of listing measures.

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
