"""What a keystroke's preview reuses (docs/performance.md): expressions read before, and the
references of the text its compile just parsed. Reuse must never change what a template
means, nor let an error slip past."""

from __future__ import annotations

import pytest

from engine.rendering import (
    TemplateSyntaxError,
    compile_parts,
    expression_scanner,
    metadata,
    partials_used,
    variable_metadata,
)
from engine.rendering.compiler import compile_template

CORPUS = [
    "Hi {{name}}, order {{orderId}} {{name}}",
    "{{#if a}}{{b}}{{else}}{{c}}{{/if}} {{b}} {{#each items}}{{this}}{{../b}}{{/each}}",
    "{{uppercase (lowercase name)}} {{formatDate when 'yyyy'}} {{{raw}}} {{~trim~}}",
    "{{lookup this 'x'}} {{@root.y}} {{#with z}}{{w}}{{/with}} {{ spaced   }} {{lookup . 1}}",
    "{{#unless n}}{{lookup x -1}}{{/unless}}{{& amp}} {{lookup x true}}",
]


def _fresh() -> None:
    expression_scanner._READ.clear()
    metadata._parsed.clear()
    metadata._calls.clear()


@pytest.mark.parametrize("text", CORPUS)
def test_a_template_compiles_the_same_with_expressions_read_before(text: str) -> None:
    _fresh()
    cold = compile_template(text)
    for other in CORPUS:  # every expression of the corpus now read once
        compile_template(other)
    assert compile_template(text) == cold
    assert len(expression_scanner._READ) > 0


@pytest.mark.parametrize(("good", "bad"), [
    ("{{name}}", "{{name}}}"),
    ("{{{name}}}", "{{{name}}"),
    ("{{name}}", "{{name}}}}"),
    ("{{#if a}}x{{/if}}", "{{if a}}"),
    ("{{uppercase a}}", "{{uppercase a 'b' 'c'}}"),
    ("{{uppercase a}}", "{{uppercase a"),
])
def test_an_expression_read_before_does_not_hide_an_error(good: str, bad: str) -> None:
    _fresh()
    with pytest.raises(TemplateSyntaxError) as cold:
        compile_template(bad)
    _fresh()
    compile_template(good)
    with pytest.raises(TemplateSyntaxError) as warm:
        compile_template(bad)
    assert str(warm.value) == str(cold.value)


def test_an_error_names_its_own_line_and_column_after_reuse() -> None:
    _fresh()
    compile_template("{{name}}")
    with pytest.raises(TemplateSyntaxError) as caught:
        compile_template("line one\n  {{name}}}")
    assert (caught.value.line, caught.value.column) == (2, 9)  # the "}}}"


def test_references_kept_from_the_compile_are_those_a_parse_finds() -> None:
    text = CORPUS[1] + CORPUS[3]
    tags = {"a": "1", "unused": "2"}
    _fresh()
    parsed = variable_metadata([text], tags)
    _fresh()
    compile_parts({"body": text})
    assert metadata._parsed.get(text) is not None  # kept by the compile, not parsed again
    assert variable_metadata([text], tags) == parsed
    assert parsed["missingVariables"] == ["b", "c", "items", "x", "y", "z", "spaced", "1"]


def test_partial_calls_kept_from_the_compile_are_those_a_parse_finds() -> None:
    text = ("{{> header}}{{#if a}}{{> row item=b}}{{else}}{{#> frame}}{{> @partial-block}}"
            "{{/frame}}{{/if}}" + CORPUS[0])
    _fresh()
    parsed = partials_used(text)
    _fresh()
    compile_parts({"body": text})
    assert metadata._calls.get(text) is not None  # kept by the compile, not parsed again
    assert partials_used(text) == parsed == {"header", "row", "frame"}
