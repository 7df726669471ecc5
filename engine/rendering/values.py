"""The render context's data model: a case-insensitive tag mapping, strings and literals.

Nothing here ever reads a Python attribute of a value: the only container is `Tags`
(looked up by key), every other value is a str, int, float, bool or None.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

_ARRAY_INDEX_LIMIT = 2**32 - 1


class Tags(dict):
    """Tag values keyed by lower-cased key; `order` keeps (original key, lower key) pairs
    in JavaScript's own-property order, which `each` follows."""

    __slots__ = ("order",)

    def __init__(self) -> None:
        super().__init__()
        self.order: list[tuple[str, str]] = []

    # Identity equality: a context change is detected by `is`, and content comparison of
    # large tag sets would cost time for nothing.
    __eq__ = object.__eq__
    __ne__ = object.__ne__
    __hash__ = object.__hash__


def make_tags(tags: Mapping[str, str]) -> Tags:
    """Build the root context; a later key that differs only in case overrides an earlier."""
    out = Tags()
    spelled: dict[str, str] = {}
    for key, value in tags.items():
        key = str(key)
        lower = key.lower()
        spelled[lower] = key  # keeps the first position, takes the last spelling
        out[lower] = value if value is None or isinstance(value, str) else str(value)
    index_keys = [k for k in spelled if _is_array_index(k)]
    index_keys.sort(key=int)
    rest = [k for k in spelled if not _is_array_index(k)]
    out.order = [(spelled[k], k) for k in index_keys + rest]
    return out


def _is_array_index(key: str) -> bool:
    return key.isdigit() and key.isascii() and (key == "0" or key[0] != "0") and (
        int(key) < _ARRAY_INDEX_LIMIT)


def get(obj: object, key: str) -> object:
    """Property lookup by lower-cased key: a tag of `Tags`, or a string's own JavaScript
    properties (`length` and character indexes, in UTF-16 units as in JavaScript)."""
    if obj.__class__ is Tags:
        return obj.get(key)  # type: ignore[union-attr]
    if obj.__class__ is str:
        return string_property(obj, key)  # type: ignore[arg-type]
    return None


def string_property(text: str, key: str) -> object:
    """`text[key]` as JavaScript sees it; None where JavaScript gives undefined."""
    if key == "length":
        return len(text) if text.isascii() or _bmp_only(text) else len(
            text.encode("utf-16-le")) // 2
    if _is_array_index(key):
        index = int(key)
        if text.isascii() or _bmp_only(text):
            return text[index] if index < len(text) else None
        return None  # would split a surrogate pair; no such string in Python output
    return None


def _bmp_only(text: str) -> bool:
    return max(text, default="\0") <= "\uffff"


def js_string(value: object) -> str:
    """`String(value)` as handlebars.js output does it (null and undefined are empty)."""
    cls = value.__class__
    if cls is str:
        return value  # type: ignore[return-value]
    if value is None:
        return ""
    if cls is bool:
        return "true" if value else "false"
    if cls is int:
        return str(value)
    if cls is float:
        return _js_number(value)  # type: ignore[arg-type]
    if cls is Tags:
        return "[object Object]"
    return ""


def _js_number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def truthy(value: object) -> bool:
    """JavaScript truthiness (every Tags object is truthy, as every JS object is)."""
    if value.__class__ is float and math.isnan(value):  # type: ignore[arg-type]
        return False
    return value.__class__ is Tags or bool(value)


def is_empty(value: object) -> bool:
    """handlebars.js `isEmpty`: falsy but not 0."""
    return not truthy(value) and not (value.__class__ in (int, float) and value == 0)


def push_context(c: tuple, value: object) -> tuple:
    """The context stack with ``value`` on top: handlebars.js adds a depth only when the
    context changes (JavaScript's `!=`: the same object, or an equal string or number)."""
    top = c[0]
    if value is top or (value.__class__ is top.__class__ and value.__class__ is not Tags
                        and value == top):
        return c
    return (value, *c)


def extend(context: object, pairs: list[tuple[str, object]]) -> Tags:
    """handlebars.js `extend({}, context, hash)`: a new object with the context's own
    properties, then each key=value of a partial call (a later key wins)."""
    out = Tags()
    if context.__class__ is Tags:
        out.update(context)  # type: ignore[arg-type]
        out.order = list(context.order)  # type: ignore[attr-defined]
    elif context.__class__ is str:
        for index, char in enumerate(context):  # type: ignore[arg-type]
            out[str(index)] = char
            out.order.append((str(index), str(index)))
    for key, value in pairs:
        lower = key.lower()
        if lower not in out:
            out.order.append((key, lower))
        out[lower] = value
    return out
