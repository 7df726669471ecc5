"""Importing css-inline without the email package's cost in a fresh process.

The css-inline extension stamps its build date at import with
`email.utils.parsedate_to_datetime`, and `email.utils` brings socket, urllib, datetime,
calendar and more: about a third of the time a fresh process takes to render and inline
its first email (bench/render_features.py, render_cold_layout_inline). When `email.utils`
is not loaded yet, the import runs with a stand-in that reads that one date form (RFC
2822, as the build writes it) into the same datetime, under the import lock so that no
other thread can import the stand-in, which is removed right after.
"""

from __future__ import annotations

import sys
import types
from typing import Any

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
           "dec")


def load() -> Any:
    """The css_inline module."""
    if "email.utils" in sys.modules:
        import css_inline

        return css_inline
    import _imp

    stand_in = types.ModuleType("email.utils")
    stand_in.parsedate_to_datetime = _parsedate_to_datetime  # type: ignore[attr-defined]
    _imp.acquire_lock()
    try:
        sys.modules.setdefault("email.utils", stand_in)
        try:
            import css_inline
        finally:
            if sys.modules.get("email.utils") is stand_in:
                del sys.modules["email.utils"]
            package = sys.modules.get("email")
            if package is not None and getattr(package, "utils", None) is stand_in:
                del package.utils
    finally:
        _imp.release_lock()
    return css_inline


def _parsedate_to_datetime(text: str) -> Any:
    """`email.utils.parsedate_to_datetime` for `Thu, 12 Nov 2026 16:44:56 +0000`; any other
    form goes to the real one."""
    import datetime

    try:
        _, day, month, year, clock, zone = text.split()
        hour, minute, second = (int(part) for part in clock.split(":"))
        sign = -1 if zone[0] == "-" else 1
        if zone[0] not in "+-" or len(zone) != 5:
            raise ValueError(zone)
        offset = datetime.timedelta(hours=int(zone[1:3]), minutes=int(zone[3:5]))
        return datetime.datetime(int(year), _MONTHS.index(month.lower()) + 1, int(day), hour,
                                 minute, second, tzinfo=datetime.timezone(sign * offset))
    except ValueError:
        del sys.modules["email.utils"]
        from email.utils import parsedate_to_datetime

        return parsedate_to_datetime(text)
