"""Loading stored programs: every malformed node is refused, and closures that `load` shares
between recurring expressions still render and charge work as each node would alone."""

from __future__ import annotations

import json
import re

import pytest

from engine.rendering import RenderError, render_part, runtime
from engine.rendering.runtime import InvalidProgram, load
from engine.rendering.values import make_tags

A = ["path", 0, ["a"]]
OUT_A = ["out", A, True]


def _nested_blocks(count: int) -> list:
    program: list = ["x"]
    for _ in range(count):
        program = [["block", "if", [A], program, None]]
    return program


def _nested_calls(count: int) -> list:
    expr: list = A
    for _ in range(count):
        expr = ["call", "uppercase", [expr]]
    return [["out", expr, True]]


# (program, the InvalidProgram message)
INVALID = [
    ("x", "program"),
    ({"a": 1}, "program"),
    (None, "program"),
    ([1], "node"),
    ([[]], "node"),
    ([("out", A, True)], "node"),
    ([["exec", "print(1)"]], "node kind 'exec'"),
    ([["out", A]], "out"),
    ([["out", A, 1]], "out"),
    ([["out", A, True, None]], "out"),
    ([["out", "a", True]], "expression"),
    ([["out", [], True]], "expression"),
    ([["out", ["eval", "1"], True]], "expression kind 'eval'"),
    ([["out", ["path", 0], True]], "path"),
    ([["out", ["path", -1, ["a"]], True]], "path"),
    ([["out", ["path", 65, ["a"]], True]], "path"),
    ([["out", ["path", True, ["a"]], True]], "path"),
    ([["out", ["path", 0.0, ["a"]], True]], "path"),
    ([["out", ["path", 0, "a"], True]], "segments"),
    ([["out", ["path", 0, [1]], True]], "segments"),
    ([["out", ["path", 0, ["a", None]], True]], "segments"),
    ([["out", ["lit"], True]], "lit"),
    ([["out", ["lit", 1, 2], True]], "lit"),
    ([["out", ["lit", [1]], True]], "lit"),
    ([["out", ["lit", {}], True]], "lit"),
    ([["out", ["data", "foo", []], True]], "data"),
    ([["out", ["data", "root"], True]], "data"),
    ([["out", ["data", "index", ["a"]], True]], "data path"),
    ([["out", ["data", "root", [1]], True]], "segments"),
    ([["out", ["call", "eval", []], True]], "call"),
    ([["out", ["call", "uppercase", "a"], True]], "call"),
    ([["out", ["call", "uppercase", []], True]], "arity"),
    ([["out", ["call", "uppercase", [A, A]], True]], "arity"),
    ([["out", ["call", "uppercase", [["path", 0, [1]]]], True]], "segments"),
    # A name that is not a string (a list cannot even be looked up) is refused as such.
    ([["out", ["data", [], []], True]], "data"),
    ([["out", ["call", {}, []], True]], "call"),
    ([["block", [], [], [], None]], "block"),
    ([["block", "if", [A], []]], "block"),
    ([["block", "loop", [A], [], None]], "block"),
    ([["block", "if", "a", [], None]], "block"),
    ([["block", "if", [], [], None]], "arity"),
    ([["block", "ifequals", [A], [], None]], "arity"),
    ([["block", "if", [["bad"]], [], None]], "expression kind 'bad'"),
    ([["block", "if", [A], "x", None]], "program"),
    ([["block", "if", [A], [], "x"]], "program"),
    ([["block", "if", [A], [1], None]], "node"),
    # The inverse is checked before the program: the first bad node names the error.
    ([["block", "if", [A], [["nope"]], [[]]]], "node"),
    # A node whose twin was loaded before is still checked in full (closures are shared).
    ([OUT_A, ["out", A, 1]], "out"),
    ([OUT_A, ["out", ["path", False, ["a"]], True]], "path"),
    ([OUT_A, ["out", ["path", 0, ["a", 1]], True]], "segments"),
    ([["out", ["call", "uppercase", [A]], True], ["out", ["call", "uppercase", []], True]],
     "arity"),
    (_nested_blocks(64), "expression"),
    (_nested_blocks(70), "expression"),
    (_nested_calls(63), "expression"),
]


@pytest.mark.parametrize(("program", "message"), INVALID)
def test_every_malformed_node_is_refused(program: object, message: str) -> None:
    with pytest.raises(InvalidProgram, match=f"^{re.escape(message)}$"):
        load(program)


def test_the_deepest_nesting_loads() -> None:
    tags = make_tags({"a": "v"})
    assert load(_nested_blocks(63))(tags) == "x"
    assert load(_nested_calls(62))(tags) == "V"


@pytest.mark.parametrize(("text", "tags", "expected"), [
    ("{{v}}{{{v}}}{{v}}{{&v}}", {"v": "<"}, "&lt;<&lt;<"),
    ("{{uppercase a}}{{lowercase a}}{{uppercase b}}{{uppercase a}}", {"a": "Ab", "b": "c"},
     "ABabCAB"),
    ("{{lookup this 'a'}}{{lookup this 'b'}}{{lookup this 'a'}}", {"a": "1", "b": "2"}, "121"),
    # 1 and true are equal as Python keys; the helper sees each as its own.
    ("{{lookup this 1}}{{lookup this true}}", {"1": "one", "true": "T"}, "oneT"),
    ("{{#with b}}{{this}}{{a}}{{../a}}{{this}}{{/with}}{{a}}", {"a": "A", "b": "c"}, "cAcA"),
    ("{{a.length}}{{a}}{{a.length}}{{@root.a}}{{a}}", {"a": "xyz"}, "3xyz3xyzxyz"),
    ("{{#each this}}{{@index}}{{this}}{{@index}}{{/each}}", {"a": "x", "b": "y"}, "0x01y1"),
])
def test_recurring_expressions_each_render_their_own_value(
        text: str, tags: dict[str, str], expected: str) -> None:
    assert render_part(None, "body", text, tags) == expected


@pytest.mark.parametrize(("text", "tags", "work"), [
    ("", {}, 1),
    ("abc", {}, 2),
    # 1 run + 4 statements + (3 + 3 + 1) expression nodes = 12, then the branch taken:
    # 3 for {{x}} (a run, a statement, a path), 2 for "y".
    ("a{{uppercase (lowercase x)}}{{uppercase (lowercase x)}}{{#if x}}{{x}}{{else}}y{{/if}}",
     {"x": "v"}, 15),
    ("a{{uppercase (lowercase x)}}{{uppercase (lowercase x)}}{{#if x}}{{x}}{{else}}y{{/if}}",
     {"x": ""}, 14),
    # 1 + 1 + 1 for the top, then per key 1 + 2 + 2: one path, one data variable.
    ("{{#each this}}{{this}}{{@key}}{{/each}}", {"a": "1", "b": "2", "c": "3"}, 18),
])
def test_work_is_one_unit_per_run_statement_and_expression_node(
        monkeypatch: pytest.MonkeyPatch, text: str, tags: dict[str, str], work: int) -> None:
    monkeypatch.setattr(runtime, "CHECK_EVERY", 0)  # check the budget at every program run
    monkeypatch.setattr(runtime, "MAX_WORK", work)
    render_part(None, "body", text, tags)  # exactly the budget: renders
    monkeypatch.setattr(runtime, "MAX_WORK", work - 1)
    with pytest.raises(RenderError, match="too much work"):
        render_part(None, "body", text, tags)


def _if_a(body: list) -> list:
    return ["block", "if", [A], body, None]


# A statement that repeats one already loaded (a JSON program holds a list of its own for
# each) is still refused for what differs: `1` and `True` are equal in Python.
@pytest.mark.parametrize(("program", "message"), [
    ([_if_a([OUT_A]), _if_a([["out", A, 1]])], "out"),
    ([_if_a([OUT_A]), _if_a([["out", ["path", False, ["a"]], True]])], "path"),
    ([_if_a(["x"]), ["block", "if", [["path", 0.0, ["a"]]], ["x"], None]], "path"),
    ([["partial", "p", None, [], "", [OUT_A]]] * 2 + [["partial", "p", None, [], "", [1]]],
     "node"),
])
def test_a_repeated_statement_differing_in_type_is_refused(program: list,
                                                            message: str) -> None:
    with pytest.raises(InvalidProgram, match=f"^{re.escape(message)}$"):
        load(json.loads(json.dumps(program)))


def test_repeated_statements_with_equal_numbers_render_each_their_own() -> None:
    def lookup(literal: object) -> list:
        return _if_a([["out", ["call", "lookup", [["path", 0, []], ["lit", literal]]], True]])

    program = json.loads(json.dumps([lookup(1), lookup(True), lookup(1.0), lookup(1)]))
    assert load(program)(make_tags({"a": "x", "1": "one", "true": "T"})) == "oneToneone"


def test_a_repeated_statement_is_checked_and_built_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[object] = []
    block_node = runtime._block_node
    monkeypatch.setattr(runtime, "_block_node",
                        lambda node, *rest: built.append(node) or block_node(node, *rest))
    row = ["<tr>", _if_a(["<td>", OUT_A, "</td>"]), "</tr>"]
    program = json.loads(json.dumps([["partial", "layout", None, [], "", row * 50]]))
    assert load(program)(make_tags({"a": "&"})) == "<tr><td>&amp;</td></tr>" * 50
    assert len(built) == 1
