"""Inlining a skeleton once and putting the values back gives, byte for byte, what the
inliner gives on the whole document: over templates that put values in every place HTML
has, and values that are empty, white space, markup, quotes, NUL, CR LF, U+00A0, marker
look-alikes. The skeleton is used where it can be and refused where it cannot."""

from __future__ import annotations

import random

import pytest

from engine.formats import css_skeleton
from engine.formats.email_body import html_document, inline_css
from engine.rendering import PartialSet, PartialSource, render_part

CSS = ("<style>p { color: red } td.name { font-weight: bold } .vip { color: gold }"
       " #top { margin: 0 } a { color: blue } li:first-child { padding: 0 }"
       " @media (max-width: 600px) { td { display: block } }</style>")
EMPTY_CSS = "<style>p:empty { display: none } b:not(.x) { color: red } p { margin: 0 }</style>"
ATTR_CSS = "<style>a[title^=x] { color: red } p { margin: 0 }</style>"

TEMPLATES = [
    ("<p>{{a}}</p><p>{{b}}</p>", CSS),
    ("<p>Dear {{a}} {{b}},</p>", CSS),
    ('<a href="{{a}}" title=\'{{b}}\'>x</a>', CSS),
    ("<a href={{a}}>x</a><p>{{b}}</p>", CSS),
    ('<div class="{{a}}">x</div><p id="{{b}}">y</p>', CSS),
    ('<p style="margin: {{a}}">x{{b}}</p>', CSS),
    ("<table>{{a}}<tr><td>{{b}}</td></tr></table>", CSS),
    ("<table><tr>{{a}}<td class=\"name\">x</td></tr>{{b}}</table>", CSS),
    ("<table>\n<tr><td>{{a}}</td></tr>\n<p>{{b}}</p></table>", CSS),
    ("<style>p { color: {{a}} }</style><p>{{b}}</p>", None),
    ("<html><head><title>{{a}}</title></head><body><p>{{b}}</p></body></html>", CSS),
    ("<html><head>{{a}}</head><body><p>{{b}}</p></body></html>", CSS),
    ("<html>{{a}}<body><p>{{b}}</p></body></html>", CSS),
    ("{{a}}<!DOCTYPE html><html><body><p>{{b}}</p></body></html>", CSS),
    ("<pre>{{a}}</pre><textarea>{{b}}</textarea>", CSS),
    ("<pre>\n{{a}}</pre><p>x</p>{{b}}", CSS),
    ("<!-- {{a}} --><p>{{b}}</p>", CSS),
    ("<{{a}}>x</{{a}}><p>{{b}}</p>", CSS),
    ("<p {{a}}>x</p><p>{{b}}</p>", CSS),
    ("<p>&{{a}} &no{{b}}</p>", CSS),
    ("<p><{{a}} &#{{b}}</p>", CSS),
    ("<p>{{{a}}}</p><a title=\"{{{b}}}\">x</a>", CSS),
    ("<ul>{{#each this}}<li>{{@key}}: {{this}}</li>{{/each}}</ul>", CSS),
    ("{{#if a}}<p class=\"vip\">{{a}}</p>{{else}}<p>none {{b}}</p>{{/if}}", CSS),
    ("<p>{{a}}</p><p>{{b}}</p>", EMPTY_CSS),
    ("<p><b>x</p>{{a}}<b class=\"x\">{{b}}</b>", EMPTY_CSS),
    ('<a title="{{a}}">x</a><a title="y{{b}}">z</a>', ATTR_CSS),
    ("<body>{{a}}<frameset></frameset><p>{{b}}</p></body>", CSS),
    ('<table><input type="{{a}}"><tr><td>{{b}}</td></tr></table>', CSS),
    ("<svg><style>{{a}}</style><text>{{b}}</text></svg><p>x</p>", CSS),
    ("<p>\r{{a}}\r\n{{b}}</p>", CSS),
    ("<p>\ue0000&quot;\ue001{{a}}</p><p>{{b}}</p>", CSS),
    ("<select>{{a}}<option>{{b}}</option></select><p>x</p>", CSS),
    ("<script>var a = '{{a}}';</script><p>{{b}}</p>", CSS),
    ("<p>{{a}}</p><link rel=\"{{b}}\" href=\"x.css\">", CSS),
    ('<p data-css-inline="{{a}}">x</p><style data-css-inline="{{b}}">p{margin:1px}</style>',
     CSS),
    ("<p>{{a}}{{b}}</p><td>{{a}}</td>", CSS),
]

VALUES = [
    "Ada", "", " ", "\n", "\nx", " x ", "\t", "a&b", "<b>", '"q"', "'s'", "a=b`c", "\x00",
    "a\x00b", "\r\n", "x\r\ny", "x\r", "\xa0", "a\xa0b", "\ue0000&quot;\ue001",
    "stylesheet", "hidden", "amp;", "not", "in;", "b", "style", "head", "/head", "é漢字",
    "&amp;", "&#x27;", "ignore", "vip", "top", "x-1", "red", "1px", "x" * 300, "\ud800",
    "p", "keep", "\f",
]


def _render(template: str, tags: dict, partials: PartialSet | None = None) -> str:
    return render_part(None, "body", template, tags, cache_key="skeleton-test",
                       partials=partials)


def _check(template: str, head: str | None, tags: dict,
           partials: PartialSet | None = None) -> None:
    document = html_document(_render(template, tags, partials), head)
    expected = inline_css(str(document))  # a plain string: the whole document inlined
    got = inline_css(document)
    assert got == expected, (template, tags)


@pytest.mark.parametrize(("template", "head"), TEMPLATES)
def test_the_skeleton_gives_what_the_whole_document_gives(template, head):
    css_skeleton.skeletons.clear()
    for i, a in enumerate(VALUES):
        _check(template, head, {"a": a, "b": VALUES[(i * 7 + 3) % len(VALUES)]})
        _check(template, head, {"a": VALUES[(i * 5 + 1) % len(VALUES)], "b": a})


def test_random_values_in_every_template():
    rng = random.Random(20261206)
    alphabet = ["a", "Z", " ", "\n", "\t", "&", "<", ">", '"', "'", "=", "`", "\xa0", "\r",
                "\x00", ";", "#", "x", "\ue000", "\ue001", "1", "/", "é"]
    for _ in range(1500):
        template, head = rng.choice(TEMPLATES)
        tags = {key: "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 6)))
                for key in ("a", "b")}
        _check(template, head, tags)


def test_each_and_if_change_the_skeleton_and_keep_the_output():
    template = ("<table>{{#each this}}<tr><td class=\"name\">{{this}}</td></tr>{{/each}}"
                "</table>{{#if vip}}<p class=\"vip\">{{vip}}</p>{{/if}}")
    for tags in ({"a": "1"}, {"a": "1", "b": "<2>"}, {"a": "", "vip": "yes"},
                 {"vip": "&", "a": " ", "b": "x"}, {}, {"a": "\n1"}):
        _check(template, CSS, tags)


def test_an_indented_partial_is_inlined_as_a_whole_document():
    partials = PartialSet({"row": PartialSource(None, "<p>{{a}}\n{{b}}</p>\n")})
    template = "<div>\n  {{> row}}\n</div>"
    for a in ("x\ny", "", "<&>"):
        _check(template, CSS, {"a": a, "b": "z"}, partials)


def _entries() -> list[object]:
    return list(css_skeleton.skeletons._data.values())


def test_one_skeleton_serves_every_value_of_a_template():
    css_skeleton.skeletons.clear()
    for value in ("Ada", "Grace & Co", "<London>", '"quoted"', "nbsp\xa0here", "\nline"):
        _check('<p>Dear {{a}}</p><td class="name">{{b}}</td><a href="/u?x={{a}}">x</a>',
               CSS, {"a": value, "b": value})
    kept = _entries()
    assert len(kept) == 1 and isinstance(kept[0], css_skeleton.Entry)


@pytest.mark.parametrize("template", [
    '<div class="{{a}}">x</div>', '<p id="{{a}}">x</p>', '<p style="color: {{a}}">x</p>',
    "<style>p { color: {{a}} }</style>", "<pre>{{a}}</pre>", "<p lang=x {{a}}>y</p>",
    "<a href={{a}}>x</a>", "<!-- {{a}} -->", "<p>&{{a}}</p>", "<p><{{a}}</p>",
    "<p>x</{{a}}>y</p>", "<p>x<!{{a}}</p>", "<p>x<?{{a}}</p>", "<p>&#x{{a}}</p>",
    "<p>x\r{{a}}</p>",
])
def test_a_skeleton_whose_values_the_inliner_reads_is_refused(template):
    css_skeleton.skeletons.clear()
    _check(template, CSS, {"a": "red"})
    assert _entries() == [css_skeleton.REFUSED]
