{#- Engine-specific SQL lives here, behind dispatch, so that the models run unchanged on DuckDB and Spark. -#}

{#- log base 2, as trec_eval's C log2(). -#}
{% macro log2(expression) -%}
    {{ return(adapter.dispatch('log2', 'retrieval_metrics')(expression)) }}
{%- endmacro %}

{% macro default__log2(expression) -%}
    (ln({{ expression }}) / ln(2))
{%- endmacro %}

{% macro duckdb__log2(expression) -%}
    log2({{ expression }})
{%- endmacro %}

{#- Sum of a double in a fixed order, so the result is bit-for-bit the same on every run: plain sum() over
    a parallel scan adds in whatever order threads finish, and float addition is not associative.
    Summing in `order_by` order also reproduces trec_eval, which adds in rank (or query) order. -#}
{% macro ordered_sum(expression, order_by) -%}
    {{ return(adapter.dispatch('ordered_sum', 'retrieval_metrics')(expression, order_by)) }}
{%- endmacro %}

{% macro default__ordered_sum(expression, order_by) -%}
    {#- Engines without ordered aggregation: correct, but the last bits may vary between runs. -#}
    sum({{ expression }})
{%- endmacro %}

{% macro duckdb__ordered_sum(expression, order_by) -%}
    list_sum(list({{ expression }} order by {{ order_by }}))
{%- endmacro %}

{#- Spark: the group's (key, value) pairs collected, sorted by key, the non-null values added left to right
    (null when there are none, as sum). -#}
{% macro spark__ordered_sum(expression, order_by) -%}
    aggregate(
        filter(array_sort(collect_list(struct({{ order_by }} as sort_key, cast({{ expression }} as double) as value))),
            entry -> entry.value is not null),
        cast(null as double), (total, entry) -> coalesce(total, 0.0D) + entry.value)
{%- endmacro %}

{#- `expression` (text) of the group's rows joined by `separator`, in `order_by` order. -#}
{% macro ordered_string_agg(expression, separator, order_by) -%}
    {{ return(adapter.dispatch('ordered_string_agg', 'retrieval_metrics')(expression, separator, order_by)) }}
{%- endmacro %}

{% macro default__ordered_string_agg(expression, separator, order_by) -%}
    string_agg({{ expression }}, '{{ separator }}' order by {{ order_by }})
{%- endmacro %}

{% macro spark__ordered_string_agg(expression, separator, order_by) -%}
    concat_ws('{{ separator }}', transform(
        array_sort(collect_list(struct({{ order_by }} as sort_key, {{ expression }} as value))), entry -> entry.value))
{%- endmacro %}

{#- Running concatenation: for each row, `expression` of every row of its partition up to and including it,
    in `order_by` order, joined by `separator`. -#}
{% macro running_string_agg(expression, separator, partition_by, order_by) -%}
    {{ return(adapter.dispatch('running_string_agg', 'retrieval_metrics')(expression, separator, partition_by, order_by)) }}
{%- endmacro %}

{% macro default__running_string_agg(expression, separator, partition_by, order_by) -%}
    string_agg({{ expression }}, '{{ separator }}') over (
        partition by {{ partition_by }} order by {{ order_by }} rows between unbounded preceding and current row
    )
{%- endmacro %}

{#- A 64-bit hash of several columns together: a cheap one-column key for finding repeated keys in a big
    table (the primary_key test then compares the real columns of the few candidates, so a collision never decides). -#}
{% macro row_hash(columns) -%}
    {{ return(adapter.dispatch('row_hash', 'retrieval_metrics')(columns)) }}
{%- endmacro %}

{% macro default__row_hash(columns) -%}
    xxhash64({{ columns | join(', ') }})
{%- endmacro %}

{% macro duckdb__row_hash(columns) -%}
    hash({{ columns | join(', ') }})
{%- endmacro %}

{#- In each group, how many distinct values `column` (an integer) takes between 1 and `upper_bound`, over
    `n_groups` groups. DuckDB: the set bits of a bitstring of `upper_bound` bits per group, far cheaper than
    count(distinct), as long as all the groups' bitstrings together stay under 128 MiB. -#}
{% macro count_distinct_between_1_and(column, upper_bound, n_groups) -%}
    {{ return(adapter.dispatch('count_distinct_between_1_and', 'retrieval_metrics')(column, upper_bound, n_groups)) }}
{%- endmacro %}

{% macro default__count_distinct_between_1_and(column, upper_bound, n_groups) -%}
    count(distinct case when {{ column }} between 1 and {{ upper_bound }} then {{ column }} end)
{%- endmacro %}

{% macro duckdb__count_distinct_between_1_and(column, upper_bound, n_groups) -%}
    {%- if n_groups * upper_bound <= 2 ** 30 -%}
    coalesce(bit_count(
        bitstring_agg({{ column }}, 1, {{ upper_bound }}) filter (where {{ column }} between 1 and {{ upper_bound }})
    ), 0)
    {%- else -%}
    {{ default__count_distinct_between_1_and(column, upper_bound, n_groups) }}
    {%- endif -%}
{%- endmacro %}

{#- The number of a row of a freshly loaded seed table in the seed file's order: the built-in retrievers keep
    documents of equal score in this order. DuckDB scans a table in insertion order (preserve_insertion_order
    is on by default), so a row number over no order is the file's line order there. -#}
{% macro file_row_number() -%}
    {{ return(adapter.dispatch('file_row_number', 'retrieval_metrics')()) }}
{%- endmacro %}

{% macro default__file_row_number() -%}
    {{ exceptions.raise_compiler_error("file_row_number: no implementation for " ~ adapter.type()
        ~ ": this engine does not promise a table's insertion order") }}
{%- endmacro %}

{% macro duckdb__file_row_number() -%}
    row_number() over ()
{%- endmacro %}

{#- Spark: dbt-spark loads a seed with one INSERT ... VALUES per batch into one file, in the file's order, which
    a scan reads back in that order; monotonically_increasing_id() numbers the rows as they are read. -#}
{% macro spark__file_row_number() -%}
    row_number() over (order by monotonically_increasing_id())
{%- endmacro %}

{#- A hash of a set of rows (of `columns`), whatever their order: the XOR of the rows' 64-bit hashes, as text.
    Cheap, one pass; it tells that a collection's judgments changed, not how. -#}
{% macro unordered_hash_agg(columns) -%}
    {{ return(adapter.dispatch('unordered_hash_agg', 'retrieval_metrics')(columns)) }}
{%- endmacro %}

{% macro default__unordered_hash_agg(columns) -%}
    cast(bit_xor({{ row_hash(columns) }}) as string)
{%- endmacro %}

{#- DuckDB's hash() of several columns xors their hashes: rows changed alike cancelled out (two judgments both
    regraded 2 -> 0 left the hash, and the runs' numbers, as they were). One string per row is hashed whole. -#}
{% macro duckdb__unordered_hash_agg(columns) -%}
    cast(bit_xor(hash(concat_ws(chr(31)
        {%- for column in columns %}, cast({{ column }} as varchar){% endfor %}))) as string)
{%- endmacro %}

{#- The fraction-th percentile of a column with linear interpolation between the two nearest values (numpy's
    default; DuckDB's quantile_cont, Spark's percentile). -#}
{% macro percentile_cont(expression, fraction) -%}
    {{ return(adapter.dispatch('percentile_cont', 'retrieval_metrics')(expression, fraction)) }}
{%- endmacro %}

{% macro default__percentile_cont(expression, fraction) -%}
    percentile({{ expression }}, {{ fraction }})
{%- endmacro %}

{% macro duckdb__percentile_cont(expression, fraction) -%}
    quantile_cont({{ expression }}, {{ fraction }})
{%- endmacro %}

{#- The product of `expression` over a window (`window`: what goes inside over (...)). Spark has no product
    aggregate: there the frame's values are collected in order and multiplied left to right. -#}
{% macro product_over(expression, window) -%}
    {{ return(adapter.dispatch('product_over', 'retrieval_metrics')(expression, window)) }}
{%- endmacro %}

{% macro default__product_over(expression, window) -%}
    product({{ expression }}) over ({{ window }})
{%- endmacro %}

{% macro spark__product_over(expression, window) -%}
    aggregate(collect_list({{ expression }}) over ({{ window }}), cast(1.0 as double), (product, value) -> product * value)
{%- endmacro %}
