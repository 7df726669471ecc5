"""An SMS's length as carriers charge it: GSM-7 septets or UCS-2 units, parts of 153 or 67."""

from __future__ import annotations

import pytest

from channels.sms.length import measure


@pytest.mark.parametrize("text, encoding, units, messages", [
    ("", "GSM-7", 0, 1),
    ("a" * 160, "GSM-7", 160, 1),
    ("a" * 161, "GSM-7", 161, 2),
    ("a" * 306, "GSM-7", 306, 2),
    ("a" * 307, "GSM-7", 307, 3),
    ("€" * 80, "GSM-7", 160, 1),  # the extension table: two septets each
    ("[" * 81, "GSM-7", 162, 2),
    ("Grüße, Ærø!", "GSM-7", 11, 1),  # in the basic table
    ("ç" * 70, "UCS-2", 70, 1),  # ç is not (Ç is)
    ("é" * 69 + "ç", "UCS-2", 70, 1),
    ("ç" * 71, "UCS-2", 71, 2),
    ("ç" * 134, "UCS-2", 134, 2),
    ("ç" * 135, "UCS-2", 135, 3),
    ("😀" * 35, "UCS-2", 70, 1),  # outside the BMP: two UTF-16 units
    ("😀" * 36, "UCS-2", 72, 2),
])
def test_a_text_is_charged_as_its_encoding_counts_it(text, encoding, units, messages):
    length = measure(text)
    assert (length.encoding, length.units, length.messages) == (encoding, units, messages)
    assert length.characters == len(text)
