{#- The project's settings, each defined once in dbt_project.yml's var setting_definitions (which
    retrieval_metrics/setting_definitions.py reads too). setting(name) gives a setting's value for this build: the
    var's (--vars), else the definition's default, checked by its rule's kind with the messages of the Python
    rules (tests/python/test_setting_definitions.py renders these macros against them). The per-collection values
    are int_collection_settings' rows. -#}

{#- A setting's value for this build, checked: k_values' cutoffs as sorted distinct integers, a yes-or-no as true or
    false, none as 'none', a number as a number. -#}
{% macro setting(name) -%}
    {%- set definitions = var('setting_definitions') -%}
    {%- if name not in definitions -%}
        {{ exceptions.raise_compiler_error("no setting " ~ name ~ " in dbt_project.yml's setting_definitions") }}
    {%- endif -%}
    {%- set definition = definitions[name] -%}
    {%- if definition.get('scope') == 'own' -%}
        {{ exceptions.raise_compiler_error("setting " ~ name ~ " has no var: it is a collection's own only") }}
    {%- endif -%}
    {%- set value = var(name, definition.default) -%}
    {%- set checked = checked_setting(definition, value) -%}
    {%- if checked.reason is not none -%}
        {{ exceptions.raise_compiler_error("var " ~ name ~ ": " ~ (value | string) ~ " " ~ checked.reason) }}
    {%- endif -%}
    {{ return(checked.value) }}
{%- endmacro %}

{#- A setting's value as int_collection_settings stores it: one text per row (a list's items, each a row). -#}
{% macro stored_setting(name) -%}
    {%- set value = setting(name) -%}
    {%- set stored = [] -%}
    {%- for item in (value if var('setting_definitions')[name].get('list_valued') else [value]) -%}
        {%- do stored.append((item | string | lower) if item is boolean else (item | string)) -%}
    {%- endfor -%}
    {{ return(stored) }}
{%- endmacro %}

{#- {value, reason}: `value` checked by the rule its definition names (reason none: taken), as
    retrieval_metrics/setting_definitions.py's KINDS check it. -#}
{% macro checked_setting(definition, value) -%}
    {%- set kind = definition.rule -%}
    {%- set text = (value | string) | trim -%}
    {%- set items = setting_items(value) -%}
    {%- set number = none if value is boolean else text | float(none) -%}
    {%- set found = {'value': value, 'reason': none} -%}
    {%- if kind == 'one_of' -%}
        {%- set choices = definition.choices | map('string') | list -%}
        {%- if value is boolean or value is mapping or (value is iterable and value is not string) or text not in choices -%}
            {%- do found.update(reason='is not one of ' ~ choices | join(', ')) -%}
        {%- endif -%}
        {%- do found.update(value=text) -%}
    {%- elif kind == 'integer' -%}
        {%- set maximum = definition.get('maximum') -%}
        {%- set words = 'an integer >= ' ~ definition.minimum if maximum is none
            else 'an integer from ' ~ definition.minimum ~ ' to ' ~ maximum -%}
        {%- set is_integer = is_integer_text(value) and (text | int) >= definition.minimum -%}
        {%- set too_big = is_integer and maximum is not none and (text | int) > maximum -%}
        {%- if definition.get('none') and text | lower == 'none' -%}
            {%- do found.update(value='none') -%}
        {%- elif definition.get('none') and (not is_integer or too_big) -%}
            {%- do found.update(reason='is not none or ' ~ words) -%}
        {%- elif not is_integer -%}
            {%- do found.update(reason='is not an integer >= ' ~ definition.minimum) -%}
        {%- elif too_big -%}
            {%- do found.update(reason='is more than ' ~ maximum) -%}
        {%- else -%}
            {%- do found.update(value=text | int) -%}
        {%- endif -%}
    {%- elif kind == 'boolean' -%}
        {%- if value is not boolean and not (value is string and value | lower in ['true', 'false']) -%}
            {%- do found.update(reason='is not true or false') -%}
        {%- endif -%}
        {%- do found.update(value=value if value is boolean else value | lower == 'true') -%}
    {%- elif kind == 'number' -%}
        {%- set minimum, maximum = definition.get('minimum'), definition.get('maximum') -%}
        {%- set exclusive = definition.get('exclusive', false) -%}
        {%- set words = ('a number between ' ~ minimum ~ ' and ' ~ maximum ~ ' (exclusive)' if exclusive
                else 'a number from ' ~ minimum ~ ' to ' ~ maximum) if minimum is not none and maximum is not none
            else 'a number' ~ ((' > ' if exclusive else ' >= ') ~ minimum if minimum is not none else '')
                ~ ((' < ' if exclusive else ' <= ') ~ maximum if maximum is not none else '') -%}
        {%- set taken = number is not none and -1e300 < number < 1e300
            and (minimum is none or (number > minimum if exclusive else number >= minimum))
            and (maximum is none or (number < maximum if exclusive else number <= maximum)) -%}
        {%- if definition.get('none') and text | lower == 'none' -%}
            {%- do found.update(value='none') -%}
        {%- elif not taken -%}
            {%- do found.update(reason='is not ' ~ ('none or ' if definition.get('none') else '') ~ words) -%}
        {%- else -%}
            {%- do found.update(value=number) -%}
        {%- endif -%}
    {%- elif kind == 'cutoffs' -%}
        {%- set bad = [] -%}
        {%- set too_big = [] -%}
        {%- for item in items -%}
            {%- if not (is_integer_text(item) and (item | string | trim | int) >= 1) -%}
                {%- do bad.append(item | string | trim) -%}
            {%- elif (item | string | trim | int) > 2147483647 -%}
                {%- do too_big.append(item | string | trim) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- if items | length == 0 -%}
            {%- do found.update(reason='is empty: give at least one cutoff, e.g. [1, 2, 3]') -%}
        {%- elif bad -%}
            {%- do found.update(reason='holds ' ~ python_repr(bad[0]) ~ ', not a positive integer') -%}
        {%- elif too_big -%}
            {%- do found.update(reason='holds ' ~ too_big[0] ~ ', more than 2147483647') -%}
        {%- else -%}
            {%- do found.update(value=items | map('string') | map('trim') | map('int') | unique | sort) -%}
        {%- endif -%}
    {%- elif kind == 'differences' -%}
        {%- set numbers = [] -%}
        {%- for item in items if item is not boolean -%}
            {%- set item_number = item | string | trim | float(none) -%}
            {%- if item_number is not none and 0 < item_number < 1e300 -%}{%- do numbers.append(item_number) -%}{%- endif -%}
        {%- endfor -%}
        {%- if items | length == 0 or numbers | length != items | length -%}
            {%- do found.update(reason='is not a list of positive numbers') -%}
        {%- endif -%}
        {%- do found.update(value=numbers | unique | sort) -%}
    {%- elif kind == 'version' -%}
        {%- if text | lower == 'latest' -%}
            {%- do found.update(value='latest') -%}
        {%- elif text.isdigit() and (text | int) <= 2147483647 -%}
            {%- do found.update(value=text | int) -%}
        {%- else -%}
            {%- do found.update(reason='is not latest or a version number >= 0') -%}
        {%- endif -%}
    {%- elif kind == 'identifier' -%}
        {%- if not is_setting_id(value) -%}
            {%- do found.update(reason='is not a run or collection id') -%}
        {%- endif -%}
    {%- elif kind == 'baselines' -%}
        {%- set bad = [] -%}
        {%- set seen = [] -%}
        {%- set twice = [] -%}
        {%- for item in items -%}
            {%- if not is_setting_id(item) or item | lower == 'none' -%}{%- do bad.append(item) -%}{%- endif -%}
            {%- if item in seen -%}{%- do twice.append(item) -%}{%- endif -%}
            {%- do seen.append(item) -%}
        {%- endfor -%}
        {%- if items | length == 1 and (items[0] is none or (items[0] | string | trim | lower) in ['', 'none']) -%}
            {%- do found.update(value=['none']) -%}
        {%- elif items | length == 0 or bad -%}
            {%- do found.update(reason='is not none or a list of run ids') -%}
        {%- elif twice -%}
            {%- do found.update(reason='names ' ~ twice[0] ~ ' twice') -%}
        {%- else -%}
            {%- do found.update(value=items | sort) -%}
        {%- endif -%}
    {%- elif kind in ['identifiers', 'measure_names'] -%}
        {%- set pattern = '[A-Za-z0-9][A-Za-z0-9_.-]*' if kind == 'identifiers' else '[A-Za-z0-9][A-Za-z0-9_.@-]*' -%}
        {%- set bad = [] -%}
        {%- for item in items if not (item is string and modules.re.fullmatch(pattern, item)) -%}
            {%- do bad.append(python_repr(item)) -%}
        {%- endfor -%}
        {%- if bad and kind == 'identifiers' -%}
            {%- do found.update(reason='holds ' ~ bad[0] ~ ', not a run id') -%}
        {%- elif bad -%}
            {%- do found.update(reason='holds ' ~ bad[0] ~ ', not a measure name (as run_measures names it: ndcg_cut_10, map)') -%}
        {%- endif -%}
        {%- do found.update(value=items | map('string') | unique | sort) -%}
    {%- else -%}
        {%- do found.update(reason='has rule ' ~ kind ~ ', which has no var') -%}
    {%- endif -%}
    {{ return(found) }}
{%- endmacro %}

{#- A list setting's items: a list's, "a,b" split at the commas, or the one value; text items trimmed. -#}
{% macro setting_items(value) -%}
    {%- set raw = value.split(',') if value is string
        else (value if value is iterable and value is not mapping else [value]) -%}
    {%- set items = [] -%}
    {%- for item in raw -%}{%- do items.append(item | trim if item is string else item) -%}{%- endfor -%}
    {{ return(items) }}
{%- endmacro %}

{#- An integer, given as one or as its digits (not a yes-or-no, not a float). -#}
{% macro is_integer_text(value) -%}
    {%- set text = (value | string) | trim -%}
    {{ return(value is not boolean and value is not float and (text[1:] if text.startswith('-') else text).isdigit()) }}
{%- endmacro %}

{#- A run or collection id, as retrieval_metrics/warehouse.py's IDENTIFIER takes it. -#}
{% macro is_setting_id(value) -%}
    {{ return(value is string and modules.re.fullmatch('[A-Za-z0-9][A-Za-z0-9_.-]*', value) is not none) }}
{%- endmacro %}

{#- A value as Python's repr writes it in a message: text quoted. -#}
{% macro python_repr(value) -%}
    {%- if value is not string -%}{{ return(value | string) }}{%- endif -%}
    {%- set text = value | replace("\\", "\\\\") -%}
    {{ return(('"' ~ text ~ '"') if "'" in text and '"' not in text else ("'" ~ text | replace("'", "\\'") ~ "'")) }}
{%- endmacro %}
