"""A program of text and `{{name}}` alone renders through flat_runs.flat_runner exactly as
through the statement-by-statement runner: the same text, pieces, slots and refusals."""

from __future__ import annotations

import pytest

from engine.rendering import RenderError, flat_runs, make_tags, runtime
from engine.rendering.compiler import compile_template

ROW = "<p>Thanks for your order {{orderId}}.</p>"
TEXTS = [
    "<h1>Hello {{name}}</h1>" + ROW * 40,
    "<b>{{a}}</b>-{{B}}-{{a}}-{{missing}}-{{a}}!",
    "{{#each items}}<li>{{a}}|{{b}}|{{c}}|{{d}}|{{a}}</li>{{/each}}",
    "<i>{{#if a}}x{{a}}y{{b}}z{{a}}w{{b}}v{{/if}}</i>",
    "{{#each list}}[{{a}}{{b}}{{c}}{{d}}]{{/each}}",
]
TAGS = {"name": "Ada & <Bob>", "orderId": "A-1001", "a": "\"q\" 'x' `y` =z", "B": "plain",
        "b": "", "c": "c", "d": "d", "items": {"one": {"a": "1", "b": "<2>", "c": "3"}},
        "list": ["p", "q"]}


def _render(text: str, tags: dict, flat_from: int, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(flat_runs, "FLAT_FROM", flat_from)
    render = runtime.load(compile_template(text))
    return render(make_tags(tags))


@pytest.mark.parametrize("text", TEXTS)
def test_a_flat_program_renders_as_statement_by_statement(
        text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    flat = _render(text, TAGS, 4, monkeypatch)
    plain = _render(text, TAGS, 10**9, monkeypatch)
    assert str(flat) == str(plain)
    assert (flat.pieces, flat.slots) == (plain.pieces, plain.slots)


def test_a_receipt_is_run_flat(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[tuple] = []
    original = flat_runs.flat_runner
    monkeypatch.setattr(runtime, "flat_runner", lambda *args: made.append(args) or
                        original(*args))
    _render(TEXTS[0], TAGS, 4, monkeypatch)
    assert made


def test_a_flat_program_too_long_is_refused_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    big = {"name": "x" * 30_000, "orderId": "<" * 8_000}  # 41 values: over a part's bound
    for flat_from in (4, 10**9):
        with pytest.raises(RenderError, match="longer than"):
            _render(TEXTS[0], big, flat_from, monkeypatch)
