"""How long an SMS is as a carrier counts it: GSM-7 when every character is in the GSM 03.38
alphabet (the extension table's characters take two septets), else UCS-2 (UTF-16 code units,
so an emoji takes two). One message holds 160 GSM-7 septets or 70 UCS-2 units; a longer text
is split into parts of 153 or 67 (the rest carries the user data header that joins them)."""

from __future__ import annotations

import math
from dataclasses import dataclass

GSM7_BASIC = frozenset(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà")
GSM7_EXTENSION = frozenset("^{}\\[~]|€\f")


@dataclass(frozen=True)
class SmsLength:
    encoding: str  # "GSM-7" or "UCS-2"
    characters: int  # as a person counts them
    units: int  # septets (GSM-7) or UTF-16 code units (UCS-2)
    messages: int  # what the carrier charges for

    @property
    def per_message(self) -> int:
        single, part = (160, 153) if self.encoding == "GSM-7" else (70, 67)
        return single if self.messages <= 1 else part


def measure(text: str) -> SmsLength:
    """The encoding, length and number of messages ``text`` is sent as."""
    if all(c in GSM7_BASIC or c in GSM7_EXTENSION for c in text):
        units = sum(2 if c in GSM7_EXTENSION else 1 for c in text)
        single, part, encoding = 160, 153, "GSM-7"
    else:
        units = len(text.encode("utf-16-le")) // 2
        single, part, encoding = 70, 67, "UCS-2"
    messages = 1 if units <= single else math.ceil(units / part)
    return SmsLength(encoding, len(text), units, messages)


def describe(text: str) -> str:
    """What an SMS text costs, as Notify says it: its length, encoding and messages."""
    length = measure(text)
    encoding = ("GSM-7" if length.encoding == "GSM-7"
                else "Unicode (UCS-2: a character outside GSM-7)")
    plural = "" if length.messages == 1 else "s"
    return (f"{length.characters} characters, {encoding}, {length.per_message} a message: "
            f"will be charged as {length.messages} text message{plural}.")
