"""formatDate / now: .NET custom and standard format strings, invariant culture."""

from __future__ import annotations

import datetime as dt

import pytest

from engine.rendering import render_part

VALUE = "2026-03-05T14:07:09.1234567Z"

# The table of issue 3 (expected values as .NET gives them).
TABLE = [
    ("yyyy-MM-dd", "2026-03-05"),
    ("dd/MM/yyyy HH:mm", "05/03/2026 14:07"),
    ("ddd, dd MMM yyyy", "Thu, 05 Mar 2026"),
    ("dddd", "Thursday"),
    ("MMMM", "March"),
    ("h:mm tt", "2:07 PM"),
    ("fff", "123"),
    ("FFFFFFF", "1234567"),
    ("zzz", "+00:00"),
    ("K", "Z"),
    ("'at' HH", "at 14"),
    ("\\d", "d"),
    ("d", "03/05/2026"),
    ("D", "Thursday, 05 March 2026"),
    ("f", "Thursday, 05 March 2026 14:07"),
    ("g", "03/05/2026 14:07"),
    ("M", "March 05"),
    ("O", "2026-03-05T14:07:09.1234567Z"),
    ("R", "Thu, 05 Mar 2026 14:07:09 GMT"),
    ("s", "2026-03-05T14:07:09"),
    ("t", "14:07"),
    ("T", "14:07:09"),
    ("u", "2026-03-05 14:07:09Z"),
    ("Y", "2026 March"),
]

MORE = [
    ("2026-03-05T14:07:09.1234567Z", "F", "Thursday, 05 March 2026 14:07:09"),
    ("2026-03-05T14:07:09.1234567Z", "G", "03/05/2026 14:07:09"),
    ("2026-03-05T14:07:09.1234567Z", "U", "Thursday, 05 March 2026 14:07:09"),
    ("2026-03-05T14:07:09.1234567Z", "%d", "5"),
    ("2026-03-05T14:07:09.1234567Z", "%h", "2"),
    ("2026-03-05T14:07:09.1234567Z", "d/M/yy H:m:s", "5/3/26 14:7:9"),
    ("2026-03-05T14:07:09.1234567Z", "hh t \"lit\" g", "02 P lit A.D."),
    ("2026-03-05T14:07:09.5Z", "ss.FFF", "09.5"),
    ("2026-03-05T14:07:09Z", "ss.FFF", "09"),
    ("2026-03-05T14:07:09Z", "ss.fff", "09.000"),
    ("2026-03-05T00:30:00Z", "h tt", "12 AM"),
    ("2026-03-05T14:07:09+02:00", "O", "2026-03-05T14:07:09.0000000+02:00"),
    ("2026-03-05T14:07:09+02:00", "zzz K z zz", "+02:00 +02:00 +2 +02"),
    ("2026-03-05T14:07:09-05:30", "R", "Thu, 05 Mar 2026 19:37:09 GMT"),
    ("2026-03-05T14:07:09-05:30", "u", "2026-03-05 19:37:09Z"),
    ("2026-03-05T14:07:09", "O", "2026-03-05T14:07:09.0000000"),
    ("2026-03-05T14:07:09", "K", ""),
    ("2026-03-05", "yyyy-MM-dd HH:mm", "2026-03-05 00:00"),
    ("2026-03-05 14:07", "g", "03/05/2026 14:07"),
    ("3/5/2026", "yyyy-MM-dd", "2026-03-05"),
    ("3/5/2026 2:07 PM", "HH:mm", "14:07"),
    ("0987-01-02T00:00:00Z", "yyyy y yy yyyyy", "0987 87 87 00987"),
]

FALLBACK = [
    ("not a date", "yyyy"),
    ("2026-02-30", "yyyy"),
    ("2026-13-01", "yyyy"),
    ("", "yyyy"),
    ("12345", "yyyy"),
    ("2026-03-05T14:07:09Z", "ffffffff"),  # eight f: .NET rejects the format
    ("2026-03-05T14:07:09Z", "'unclosed"),
    ("2026-03-05T14:07:09Z", "\\"),
]


def _format(value: str, fmt: str) -> str:
    return render_part(None, "body", "{{{formatDate value fmt}}}", {"value": value, "fmt": fmt})


@pytest.mark.parametrize(("fmt", "expected"), TABLE)
def test_issue_table(fmt: str, expected: str) -> None:
    assert _format(VALUE, fmt) == expected


@pytest.mark.parametrize(("value", "fmt", "expected"), MORE)
def test_more_formats(value: str, fmt: str, expected: str) -> None:
    assert _format(value, fmt) == expected


@pytest.mark.parametrize(("value", "fmt"), FALLBACK)
def test_falls_back_to_the_raw_value(value: str, fmt: str) -> None:
    assert _format(value, fmt) == value


def test_format_as_a_literal_and_escaped_output() -> None:
    text = '{{formatDate when "dddd \'<b>\'"}}'
    assert render_part(None, "b", text, {"When": VALUE}) == "Thursday &lt;b&gt;"


def test_missing_value_renders_empty() -> None:
    assert render_part(None, "b", '{{formatDate nothing "yyyy"}}', {}) == ""


def test_now_is_utc() -> None:
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    out = render_part(None, "b", '{{now "yyyy-MM-ddTHH:mm:ss"}}|{{now "K zzz"}}|{{now}}', {})
    stamp, zone, default = out.split("|")
    after = dt.datetime.now(dt.UTC)
    parsed = dt.datetime.fromisoformat(stamp).replace(tzinfo=dt.UTC)
    assert before <= parsed <= after
    assert zone == "Z +00:00"
    assert default.endswith("Z") and len(default) == len("2026-03-05T14:07:09.1234567Z")
