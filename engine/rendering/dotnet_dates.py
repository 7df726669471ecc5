""".NET DateTime format strings (custom and standard) with the invariant culture.

Values keep .NET's 100 ns tick precision and their kind: UTC ('Z'), an explicit offset,
or unspecified (no designator; formatted as UTC, 'K' empty). A one-character format that
is not a standard one is read as that custom specifier (so `K` gives `Z`, as if `%K`).
A value that does not parse, or a format .NET would reject, gives back the raw value.
"""

from __future__ import annotations

import datetime as _dt
import re

_MAX_VALUE_CHARS = 64
_ISO = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,7})\d{0,9})?)?"
    r"\s?(Z|z|[+-]\d{2}(?::?\d{2})?)?)?"
)
_US = re.compile(
    r"(\d{1,2})/(\d{1,2})/(\d{4})(?: (\d{1,2}):(\d{2})(?::(\d{2}))?(?: ?([AaPp][Mm]))?)?"
)

_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_STANDARD = {
    "d": "MM/dd/yyyy", "D": "dddd, dd MMMM yyyy", "f": "dddd, dd MMMM yyyy HH:mm",
    "F": "dddd, dd MMMM yyyy HH:mm:ss", "g": "MM/dd/yyyy HH:mm", "G": "MM/dd/yyyy HH:mm:ss",
    "m": "MMMM dd", "M": "MMMM dd", "o": "yyyy'-'MM'-'dd'T'HH':'mm':'ss'.'fffffffK",
    "O": "yyyy'-'MM'-'dd'T'HH':'mm':'ss'.'fffffffK",
    "r": "ddd, dd MMM yyyy HH':'mm':'ss 'GMT'", "R": "ddd, dd MMM yyyy HH':'mm':'ss 'GMT'",
    "s": "yyyy'-'MM'-'dd'T'HH':'mm':'ss", "t": "HH:mm", "T": "HH:mm:ss",
    "u": "yyyy'-'MM'-'dd HH':'mm':'ss'Z'", "U": "dddd, dd MMMM yyyy HH:mm:ss",
    "y": "yyyy MMMM", "Y": "yyyy MMMM",
}
_TO_UTC = frozenset("rRuU")


class _FormatError(ValueError):
    """The format string is one .NET would reject."""


class Moment:
    """A calendar time with 100 ns ticks and an offset (None when unspecified)."""

    __slots__ = ("offset", "ticks", "utc", "when")

    def __init__(self, when: _dt.datetime, ticks: int, offset: int | None, utc: bool) -> None:
        self.when, self.ticks, self.offset, self.utc = when, ticks, offset, utc

    def to_utc(self) -> Moment:
        if not self.offset:
            return Moment(self.when, self.ticks, 0 if self.offset is not None else None,
                          self.utc or self.offset is not None)
        return Moment(self.when - _dt.timedelta(minutes=self.offset), self.ticks, 0, True)


def parse_value(raw: str) -> Moment | None:
    """ISO 8601 (date, date and time, fraction up to 7 digits, Z or offset) or M/d/yyyy."""
    text = raw.strip()
    if len(text) > _MAX_VALUE_CHARS:
        return None
    try:
        m = _ISO.fullmatch(text)
        if m:
            y, mo, d, h, mi, s, frac, zone = m.groups()
            when = _dt.datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0))
            ticks = int((frac or "").ljust(7, "0"))
            if zone is None:
                return Moment(when, ticks, None, False)
            if zone in "Zz":
                return Moment(when, ticks, 0, True)
            digits = zone[1:].replace(":", "")
            minutes = int(digits[:2]) * 60 + int(digits[2:] or 0)
            if int(digits[:2]) > 14 or int(digits[2:] or 0) > 59:
                return None
            return Moment(when, ticks, -minutes if zone[0] == "-" else minutes, False)
        m = _US.fullmatch(text)
        if m:
            mo, d, y, h, mi, s, ampm = m.groups()
            hour = int(h or 0)
            if ampm:
                if not 1 <= hour <= 12:
                    return None
                hour = hour % 12 + (12 if ampm.lower() == "pm" else 0)
            when = _dt.datetime(int(y), int(mo), int(d), hour, int(mi or 0), int(s or 0))
            return Moment(when, 0, None, False)
    except ValueError:
        return None
    return None


def format_value(raw: str, fmt: str) -> str:
    """`formatDate`: the formatted value, or `raw` when it does not parse or `fmt` is bad."""
    moment = parse_value(raw)
    if moment is None:
        return raw
    try:
        return format_moment(moment, fmt)
    except _FormatError:
        return raw


def format_now(fmt: str) -> str:
    """`now`: the current UTC time; an invalid format gives the round-trip form."""
    now = _dt.datetime.now(_dt.UTC)
    moment = Moment(now.replace(microsecond=0, tzinfo=None), now.microsecond * 10, 0, True)
    try:
        return format_moment(moment, fmt)
    except _FormatError:
        return format_moment(moment, "O")


def format_moment(moment: Moment, fmt: str) -> str:
    """Apply a .NET standard (one character) or custom format string."""
    if fmt == "":
        fmt = "G"
    if len(fmt) == 1 and fmt in _STANDARD:
        if fmt in _TO_UTC:
            moment = moment.to_utc()
        return _custom(moment, _STANDARD[fmt])
    return _custom(moment, fmt)


def _repeat(fmt: str, i: int) -> int:
    ch, j = fmt[i], i + 1
    while j < len(fmt) and fmt[j] == ch:
        j += 1
    return j - i


def _digits(value: int, width: int) -> str:
    return str(value).zfill(width)


def _offset(moment: Moment, count: int) -> str:
    minutes = moment.offset or 0
    sign = "-" if minutes < 0 else "+"
    hours, mins = divmod(abs(minutes), 60)
    if count == 1:
        return f"{sign}{hours}"
    if count == 2:
        return f"{sign}{hours:02d}"
    return f"{sign}{hours:02d}:{mins:02d}"


def _custom(moment: Moment, fmt: str) -> str:
    w = moment.when
    out: list[str] = []
    i, n = 0, len(fmt)
    while i < n:
        ch = fmt[i]
        count = 1
        if ch in "hHmsfFtdMyzg":
            count = _repeat(fmt, i)
        if ch == "h":
            out.append(_digits(w.hour % 12 or 12, min(count, 2)))
        elif ch == "H":
            out.append(_digits(w.hour, min(count, 2)))
        elif ch == "m":
            out.append(_digits(w.minute, min(count, 2)))
        elif ch == "s":
            out.append(_digits(w.second, min(count, 2)))
        elif ch in "fF":
            if count > 7:
                raise _FormatError(fmt)
            fraction = moment.ticks // 10 ** (7 - count)
            digits = _digits(fraction, count)
            if ch == "F":
                digits = digits.rstrip("0")
                if not digits and out and out[-1].endswith("."):
                    out[-1] = out[-1][:-1]
            out.append(digits)
        elif ch == "t":
            designator = "AM" if w.hour < 12 else "PM"
            out.append(designator[0] if count == 1 else designator)
        elif ch == "d":
            if count <= 2:
                out.append(_digits(w.day, count))
            else:
                day = _DAYS[w.weekday()]
                out.append(day[:3] if count == 3 else day)
        elif ch == "M":
            if count <= 2:
                out.append(_digits(w.month, count))
            else:
                month = _MONTHS[w.month - 1]
                out.append(month[:3] if count == 3 else month)
        elif ch == "y":
            out.append(_digits(w.year % 100, count) if count <= 2 else _digits(w.year, count))
        elif ch == "z":
            out.append(_offset(moment, count))
        elif ch == "g":
            out.append("A.D.")
        elif ch == "K":
            if moment.utc:
                out.append("Z")
            elif moment.offset is not None:
                out.append(_offset(moment, 3))
        elif ch in "'\"":
            j, buf = i + 1, []
            while j < n and fmt[j] != ch:
                if fmt[j] == "\\":
                    j += 1
                    if j >= n:
                        raise _FormatError(fmt)
                buf.append(fmt[j])
                j += 1
            if j >= n:
                raise _FormatError(fmt)
            out.append("".join(buf))
            count = j - i + 1
        elif ch == "%":
            if i + 1 >= n or fmt[i + 1] == "%":
                raise _FormatError(fmt)
            out.append(_custom(moment, fmt[i + 1]))
            count = 2
        elif ch == "\\":
            if i + 1 >= n:
                raise _FormatError(fmt)
            out.append(fmt[i + 1])
            count = 2
        else:
            out.append(ch)
        i += count
    return "".join(out)
