"""engine/formats/json_text.py writes the very text json.dumps writes."""

from __future__ import annotations

import json

import pytest

from engine.formats import json_text

LONG = "<p>Thanks for your order A-1001.</p>" * 10
STRINGS = ["", "plain", LONG, LONG + '"', LONG + "\\", LONG + "\n", LONG + "\t", LONG + "\x7f",
           LONG + "\x00", LONG + "é", LONG + "\u2028", LONG + "\ud800", "é" * 200, "\n" * 300,
           "x" * (json_text.LONG - 1) + "\x01", "x" * json_text.LONG]


@pytest.mark.parametrize("text", STRINGS)
def test_a_string_is_written_as_json_dumps_writes_it(text: str) -> None:
    assert json_text.string(text) == json.dumps(text)

    class Rendered(str):
        pass

    assert json_text.string(Rendered(text)) == json.dumps(Rendered(text))


VALUES = [None, True, 0, -3, 2.5, float("nan"), float("inf"), "x", [], {}, (1, "a"),
          {"a": [1, 2.0, None, {"b": LONG}], "c": {"d": True, "e": "é\n"}, "f": ()},
          {1: "int key", 2.5: "float key", None: "none key", False: "bool key"},
          [STRINGS, {s: s for s in STRINGS}]]


@pytest.mark.parametrize("value", VALUES)
def test_dumps_and_compact_are_json_dumps(value: object) -> None:
    assert json_text.dumps(value) == json.dumps(value)
    assert json_text.compact(value) == json.dumps(value, separators=(",", ":"),
                                                  ensure_ascii=False)


def test_a_value_json_cannot_write_is_refused_alike() -> None:
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        json_text.dumps({"a": {1}})
    with pytest.raises(TypeError, match="Object of type object is not JSON serializable"):
        json_text.compact([object()])


def test_a_key_answers_only_the_text_it_wrote_last() -> None:
    last = json_text.LastStrings(keys=2, chars=100_000)
    texts = (LONG, LONG + '"\n', None, "short")
    assert last.strings("v1", texts) == [json.dumps(t) for t in texts]
    again = last.strings("v1", tuple(t if t is None else (t + ".")[:-1] for t in texts))
    assert again == [json.dumps(t) for t in texts]
    changed = (LONG + "x", LONG + '"\n', None, "short")
    assert last.strings("v1", changed) == [json.dumps(t) for t in changed]


def test_the_last_strings_are_bounded_by_keys_and_characters() -> None:
    last = json_text.LastStrings(keys=2, chars=len(LONG) * 12)
    for key in range(5):
        last.strings(key, (LONG,))
    assert len(last._rows) == 2 and last._chars <= len(LONG) * 12
    last.strings("huge", (LONG * 3,))  # more than a quarter of the budget: not kept
    assert "huge" not in last._rows
