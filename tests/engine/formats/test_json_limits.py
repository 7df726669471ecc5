"""json_limits.loads: a body parsed at once when its bytes show no count can pass a limit,
the depth then read off the parsed value; else the counting pass first (tests/api/test_limits.py
drives both through the API)."""

from __future__ import annotations

import json

import pytest

from engine.formats import json_limits
from engine.formats.json_limits import MAX_DEPTH, StructureRefused, loads, structure_problem


def _nested(depth: int) -> bytes:
    return b'{"a": ' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


@pytest.mark.parametrize("depth", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 5_000])
def test_the_depth_read_off_the_parsed_value_is_the_passs(depth: int) -> None:
    body = _nested(depth)
    problem = structure_problem(body)
    assert (problem is None) == (depth <= MAX_DEPTH)
    if problem is None:
        assert loads(body) == json.loads(body)
    else:
        # 5,000 levels: the parser's own RecursionError, answered as the same limit.
        with pytest.raises(StructureRefused, match=f"deeper than {MAX_DEPTH} levels"):
            loads(body)


def test_a_template_full_of_braces_and_escapes_is_parsed_without_the_pass(monkeypatch):
    # The editor's body: thousands of Handlebars braces and escaped quotes, all in strings.
    template = '<td class="x">{{#each items}}{{name}}: "{{price}}"{{/each}}</td>\n' * 800
    body = json.dumps({"body": template, "sample": "{}"}).encode()
    assert body.count(b"{") > MAX_DEPTH
    passes = []
    monkeypatch.setattr(json_limits, "_counted_problem", lambda raw: passes.append(raw))
    assert loads(body) == {"body": template, "sample": "{}"}
    assert passes == []


@pytest.mark.parametrize(("body", "words"), [
    (json.dumps({"to": [{}] * 12_000}).encode(), "arrays and objects"),
    (json.dumps({"to": ["a@example.com"] * 25_000}).encode(), "20,000 values"),
])
def test_a_body_whose_counts_could_pass_a_limit_goes_through_the_pass(body, words):
    with pytest.raises(StructureRefused, match=words):
        loads(body)


def test_braces_in_strings_past_every_count_still_parse() -> None:
    # The bytes count past every limit, the structure is one object: the pass lets it by.
    body = json.dumps({"value": "[[{{,," * 25_000}).encode()
    assert loads(body) == {"value": "[[{{,," * 25_000}


def test_text_that_is_not_json_is_the_parsers_error() -> None:
    with pytest.raises(ValueError) as refused:
        loads(b'{"body": "unfinished')
    assert not isinstance(refused.value, StructureRefused)
