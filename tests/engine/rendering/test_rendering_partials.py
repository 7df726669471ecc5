"""Partials against handlebars.js: `{{> name}}`, context and key=value arguments, partial
blocks with `{{> @partial-block}}`, standalone indentation, and the bounds a render keeps
with partials (work, depth, a partial that is missing)."""

from __future__ import annotations

import json
import random
import subprocess
import tracemalloc
from pathlib import Path

import pytest

from engine.rendering import (
    PartialSet,
    PartialSource,
    RenderError,
    TemplateSyntaxError,
    check_template,
    compile_parts,
    partials_used,
    render_part,
)

from .test_rendering_differential import HERE, handlebars_dir  # noqa: F401 (fixture)

DATA = {"name": "Bob <b>", "first": "Ada", "city": "Paris", "link": "https://x.test/?a=1&b=2",
        "empty": "", "x": "X"}
PARTIALS = {
    "footer": "<p>Acme Ltd, {{city}}</p>\n",
    "header": "<h1>{{uppercase first}}</h1>",
    "layout": "<html>\n<body>\n  {{> @partial-block}}\n</body>\n</html>\n",
    "button": "<a href=\"{{url}}\">{{label}}</a>",
    "card": "<div>\n  {{#if title}}\n  <h2>{{title}}</h2>\n  {{/if}}\n  {{> @partial-block}}\n"
            "</div>",
    "ctx": "[{{this}}|{{first}}|{{@root.first}}|{{../first}}|{{@index}}]",
    "nested": "<section>\n  {{> footer}}\n</section>\n",
    "wrap": "({{> @partial-block}})",
    "lines": "a\nb\n\nc\n",
}
CORPUS = [
    "{{> footer}}",
    "Hi {{name}}\n{{> footer}}\nbye",
    "  {{> footer}}\n  {{> lines}}\nend",
    "<div>\n    {{> nested}}\n</div>",
    "{{> button url=link label=\"Go & see\"}}",
    "{{> button url=link label=name}}|{{> button label=(uppercase first) url=\"/\"}}",
    "{{#> layout}}\n<p>Hello {{name}}</p>\n{{> footer}}\n{{/layout}}",
    "{{#> layout}}{{#> card title=first}}inner {{title}} {{name}}{{/card}}{{/layout}}",
    "{{#> wrap}}{{#> wrap}}x{{/wrap}}{{/wrap}}",
    "{{#> missing}}fallback {{first}}{{/missing}}",
    "{{#each this}}{{> ctx}}{{/each}}",
    "{{#with first}}{{> ctx}}{{/with}}",
    "{{> ctx first}}{{> ctx \"lit\"}}",
    "{{> ctx x=1}}",
    "{{~> header ~}}   {{> header}}",
    "  {{~> footer}}\n",
    "{{#if name}}\n  {{> footer}}\n{{/if}}\n",
    "{{#> layout}}\n  {{#each this}}\n    {{> button url=this label=@key}}\n  {{/each}}\n"
    "{{/layout}}",
    "{{#> card title=\"T\"}}\n  {{> header}}\n{{/card}}\n",
    "\t{{> lines}}\t\nx",
]


def _render(template: str, data: dict, partials: dict[str, str]) -> str:
    found = PartialSet({k: PartialSource(None, v) for k, v in partials.items()})
    return render_part(None, "body", template, data, partials=found)


def _handlebars(directory: Path, cases: list[tuple[str, dict, dict]]) -> list:
    payload = json.dumps([{"template": t, "data": d, "partials": p} for t, d, p in cases])
    proc = subprocess.run(["node", str(HERE / "hbs_render.js"), str(directory)],
                          input=payload, capture_output=True, text=True, timeout=60,
                          check=True)
    return json.loads(proc.stdout)


def test_partials_match_handlebars_js(handlebars_dir: Path) -> None:  # noqa: F811
    results = _handlebars(handlebars_dir, [(t, DATA, PARTIALS) for t in CORPUS])
    for template, reference in zip(CORPUS, results, strict=True):
        assert "out" in reference, (template, reference)
        assert _render(template, DATA, PARTIALS) == reference["out"], template
        stored = compile_parts({"body": template})
        stored_partials = PartialSet({k: PartialSource(f"k-{k}", v, compile_parts({"body": v}))
                                      for k, v in PARTIALS.items()})
        assert render_part(stored, "body", template, DATA,
                           partials=stored_partials) == reference["out"], template


def test_a_layout_and_two_partials_render_as_handlebars_js(
        handlebars_dir: Path) -> None:  # noqa: F811
    layout = ("<!doctype html>\n<html>\n<head><title>{{title}}</title></head>\n<body>\n"
              "  {{> header}}\n  {{> @partial-block}}\n  {{> footer}}\n</body>\n</html>\n")
    partials = {"layout": layout, "header": "<header>{{uppercase company}}</header>\n",
                "footer": "<footer>\n  {{company}}, {{city}}\n</footer>\n"}
    template = ("{{#> layout title=\"Your order\"}}\n<p>Hello {{name}},</p>\n"
                "{{#each this}}\n<i>{{@key}}</i>\n{{/each}}\n{{/layout}}\n")
    data = {"name": "Ann & Co", "company": "Acme", "city": "Lyon"}
    (reference,) = _handlebars(handlebars_dir, [(template, data, partials)])
    assert _render(template, data, partials) == reference["out"]
    assert "<header>ACME</header>" in reference["out"]


_PIECES = ["x", "\n", "  ", "{{name}}", "{{> p1}}", "  {{> p2}}\n", "{{#> p1}}b{{/p1}}",
           "{{#if name}}\n{{> p2}}\n{{/if}}\n", "{{> p1 first}}", "{{> p2 k=name}}",
           "{{#each this}}{{> p1}}{{/each}}", "{{~> p2~}}", " {{#> p3}}\n{{first}}\n{{/p3}}\n"]
_GEN_PARTIALS = {"p1": "<{{this}}{{k}}>", "p2": "l1\n  l2 {{k}}\n",
                 "p3": "[\n  {{> @partial-block}}\n]"}


def test_generated_partial_templates_match_handlebars_js(
        handlebars_dir: Path) -> None:  # noqa: F811
    r = random.Random(55)
    cases = ["".join(r.choice(_PIECES) for _ in range(r.randint(1, 6))) for _ in range(400)]
    data = {"name": "N", "first": "F"}
    results = _handlebars(handlebars_dir, [(t, data, _GEN_PARTIALS) for t in cases])
    for template, reference in zip(cases, results, strict=True):
        assert "out" in reference, (template, reference)
        assert _render(template, data, _GEN_PARTIALS) == reference["out"], template


def test_a_missing_partial_is_a_render_error_naming_it() -> None:
    with pytest.raises(RenderError, match="footer"):
        _render("a {{> footer}}", DATA, {})


def test_a_partial_including_itself_ends_in_a_render_error() -> None:
    with pytest.raises(RenderError, match="nested more than"):
        _render("{{> loop}}", DATA, {"loop": "x{{> loop}}"})


def test_partials_share_the_work_budget() -> None:
    heavy = "{{#each @root}}{{#each @root}}{{#each @root}}{{#each @root}}x{{/each}}" \
            "{{/each}}{{/each}}{{/each}}"
    tags = {f"k{i}": "v" for i in range(40)}
    with pytest.raises(RenderError, match=r"too much work|too long"):
        _render("{{> a}}{{> a}}{{> a}}", tags, {"a": heavy})


def test_a_partial_that_does_not_parse_is_named() -> None:
    with pytest.raises(RenderError, match="partial bad: line 1, column 3"):
        _render("{{> bad}}", DATA, {"bad": "x {{#if}}"})


def test_partial_escaping_follows_the_calling_part() -> None:
    found = PartialSet({"who": PartialSource("who-1", "{{name}}")})
    assert render_part(None, "body", "{{> who}}", DATA, partials=found) == "Bob &lt;b&gt;"
    assert render_part(None, "subject", "{{> who}}", DATA, partials=found,
                       language="text") == "Bob <b>"


@pytest.mark.parametrize(("template", "message"), [
    ("{{> foo/bar}}", "a partial is named"),
    ("{{> (lookup this 'x')}}", "a partial is named"),
    ("{{> foo a b}}", "at most one context"),
    ("{{> foo k=v a}}", "comes before"),
    ("{{#> foo}}a{{else}}b{{/foo}}", "{{else}} inside the partial block"),
    ("{{#> foo}}a{{/bar}}", "does not close"),
    ("{{#> @partial-block}}a{{/@partial-block}}", "not supported"),
    ("{{> foo k=}}", "missing after"),
])
def test_partial_syntax_outside_the_subset_is_refused(template: str, message: str) -> None:
    with pytest.raises(TemplateSyntaxError, match="line 1, column") as caught:
        check_template(template)
    assert message in str(caught.value)


def test_partials_used_names_every_call() -> None:
    text = "{{#if a}}{{> one}}{{else}}{{#> two}}{{> @partial-block}}{{> three x=1}}{{/two}}{{/if}}"
    assert partials_used(text) == {"one", "two", "three"}


def test_a_wide_indent_over_many_lines_is_refused_before_it_is_built() -> None:
    # 200,000 lines indented by 100,000 spaces would be 20 GB of output: refused by size
    # before the indented text exists.
    tags = {f"k{i}": "v" for i in range(10)}
    template = " " * 100_000 + "{{> many}}\n"
    many = "\n" * 200_000

    tracemalloc.start()
    with pytest.raises(RenderError, match="longer than"):
        _render(template, tags, {"many": many})
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 200_000_000
