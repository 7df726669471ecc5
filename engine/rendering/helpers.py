"""The helpers of spec 2.3 (docs/api.md): names, arities and the inline helper functions.

Helper names are matched case-insensitively, so every table here is keyed by lower case.
Block helpers (if, unless, each, with, ifEquals) are control flow and live in runtime.py.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

from .values import get, js_string, truthy

# name -> (fewest, most) positional arguments
BLOCK_HELPERS: dict[str, tuple[int, int]] = {
    "if": (1, 1), "unless": (1, 1), "each": (1, 1), "with": (1, 1), "ifequals": (2, 2),
}
INLINE_HELPERS: dict[str, tuple[int, int]] = {
    "lookup": (2, 2), "log": (1, 8), "formatdate": (2, 2), "now": (0, 1),
    "uppercase": (1, 1), "lowercase": (1, 1),
}
DATA_NAMES = frozenset({"index", "key", "first", "last", "root"})
_LOG_CHARS = 200


def _lookup(obj: object, field: object) -> object:
    if not truthy(obj):
        return obj
    return get(obj, js_string(field).lower())


MAX_LOG_LINES = 20  # per render: a log inside nested loops once wrote 10,001 lines
# The lines a render may still log (a one-item list, mutable): set by each render.
log_lines_left: ContextVar[list[int] | None] = ContextVar("herald_template_log_left",
                                                            default=None)


def _log(*values: object) -> None:
    import logging

    left = log_lines_left.get()
    if left is not None:
        if left[0] <= 0:
            return
        left[0] -= 1
    text = " ".join(js_string(v) for v in values)[:_LOG_CHARS]
    if left is not None and left[0] == 0:
        text += f" (at most {MAX_LOG_LINES} log lines a render: the rest are dropped)"
    logging.getLogger("engine.rendering").info("template log: %s", text)


def _uppercase(value: object) -> str:
    return js_string(value).upper()


def _lowercase(value: object) -> str:
    return js_string(value).lower()


def _format_date(value: object, fmt: object) -> str:
    from .dotnet_dates import format_value

    return format_value(js_string(value), js_string(fmt))


def _now(fmt: object = "O") -> str:
    from .dotnet_dates import format_now

    return format_now(js_string(fmt))


INLINE_FUNCTIONS: dict[str, Callable[..., object]] = {
    "lookup": _lookup, "log": _log, "formatdate": _format_date, "now": _now,
    "uppercase": _uppercase, "lowercase": _lowercase,
}
