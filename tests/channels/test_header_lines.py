"""Header values stay one line whatever a tag or a stored payload put in them."""

from __future__ import annotations

import pytest

from channels.email.mime import one_line
from engine.plugin_api import CONTROLS


@pytest.mark.parametrize("control", ["\r", "\n", "\x00", "\x1f", "\x7f", "\x85", "\u2028",
                                     "\u2029"], ids=repr)
def test_every_control_becomes_a_space(control):
    assert one_line(f"a{control}{control}b") == "a b"


def test_a_printable_value_is_given_back_as_it_is():
    link = "<https://h.example/t/u/" + "x" * 300 + ">"
    assert one_line(link) is link
    # Unprintable but no control: a no-break space and a zero-width space stay.
    assert one_line("a\xa0b\u200bc") == "a\xa0b\u200bc"


def test_no_printable_character_is_a_control():
    assert not [c for c in map(chr, range(0x110000)) if c.isprintable() and CONTROLS.match(c)]
