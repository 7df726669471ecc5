"""Small field checks that every channel's options share (D2 in docs/api.md: every broken
rule reported)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any

from engine.errors import FieldErrors
from engine.formats.addresses import valid_email

MAX_RECIPIENTS = 1000  # per request's own lists (spec 8.1)


def string_list(errors: FieldErrors, value: object, path: str, code: str) -> list[Any]:
    """``value`` as a list, or [] with ``code`` reported when it is not one."""
    if value is None:
        return []
    if not isinstance(value, list):
        errors.add(path, code, "must be an array of strings")
        return []
    return value


def addresses(errors: FieldErrors, value: object, path: str, empty: str, invalid: str,
              check: Callable[[Any], bool] = valid_email) -> int:
    """Each entry of an address list checked; returns how many entries there were."""
    items = string_list(errors, value, path, invalid)
    # Past the spec's limit the request is refused anyway (too_many_recipients): checking
    # 1.5 million more entries would only buy an attacker CPU.
    for i, item in enumerate(items[:MAX_RECIPIENTS]):
        if isinstance(item, str) and not item.strip():
            errors.add(f"{path}[{i}]", empty, "must not be blank")
        elif not check(item):
            errors.add(f"{path}[{i}]", invalid, "is not a valid address")
    return len(items)


def boolean(errors: FieldErrors, options: dict[str, Any], key: str, path: str,
            nullable: bool = True) -> None:
    """A boolean option; spec 2.5 (docs/api.md) types some as "boolean or null", others as
    "boolean"."""
    value = options.get(key, False)
    if (value is not None or not nullable) and not isinstance(value, bool):
        errors.add(f"{path}.{key}", "notifications.validation_type",
                   "must be true, false or null" if nullable else "must be true or false")


def options_object(errors: FieldErrors, options: object, path: str) -> dict[str, Any] | None:
    """The options object, or None when absent or (reported) not an object."""
    if options is None:
        return None
    if not isinstance(options, dict):
        errors.add(path, "notifications.validation_type", "must be an object or null")
        return None
    return options


def decoded_size(content: str) -> int | None:
    """Decoded byte size of strict base64, or None when it is not base64."""
    compact = "".join(content.split())
    try:
        return len(base64.b64decode(compact, validate=True))
    except (binascii.Error, ValueError):
        return None
