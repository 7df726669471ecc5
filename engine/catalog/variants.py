"""Language variants of a template version: each keyed by a BCP 47 tag (`fr`, `fr-BE`,
`pt-BR`), with its own template parts (subject, body, htmlHead; an SMS's or a webhook's
body). A send's tag `locale` picks one, falling back `fr-BE` -> `fr` -> the version's own
text (docs/rendering.md, "Language variants").

Stored in the version's content as ``variants: [{locale, <part>: text, ...}]``; each
variant's programs are stored at publish with the version's, under ``<locale>/<part>``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# A BCP 47 language tag's shape: a 2-3 letter (or 4-8 letter registered) language, then
# subtags of 1-8 letters or digits. Compared without case, as the tags are.
TAG = re.compile(r"[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8}){0,7}")
TAG_RULE = "a BCP 47 language tag such as fr, fr-BE or pt-BR"
LOCALE_TAG = "locale"


def valid_tag(value: object) -> bool:
    return isinstance(value, str) and TAG.fullmatch(value) is not None


def variants(content: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The version's variants (a malformed entry is not one)."""
    found = content.get("variants")
    if not isinstance(found, list):
        return []
    return [v for v in found if isinstance(v, dict) and valid_tag(v.get("locale"))]


def requested(tags: Mapping[str, Any]) -> str | None:
    """The send's `locale` tag (its key matched without case, as every tag is)."""
    value = None
    for key, item in tags.items():
        if str(key).lower() == LOCALE_TAG:
            value = item  # a later spelling wins, as in the render context
    return value.strip() if isinstance(value, str) and value.strip() else None


def pick(content: Mapping[str, Any], tags: Mapping[str, Any]) -> dict[str, Any] | None:
    """The variant the send's `locale` selects: the tag itself, then each shorter prefix
    (`fr-CA` -> `fr`), compared without case; None: the version's own text."""
    wanted = requested(tags)
    found = variants(content)
    if wanted is None or not found:
        return None
    by_tag = {v["locale"].lower(): v for v in found}
    subtags = wanted.replace("_", "-").lower().split("-")
    while subtags:
        hit = by_tag.get("-".join(subtags))
        if hit is not None:
            return hit
        subtags.pop()
    return None


def part_text(content: Mapping[str, Any], variant: Mapping[str, Any] | None,
              part: str) -> tuple[str, str | None]:
    """(stored program's part name, text) of ``part``: the variant's own text when it has
    one, else the version's."""
    if variant is not None and isinstance(variant.get(part), str):
        return f"{variant['locale']}/{part}", variant[part]
    return part, content.get(part)


def variant_parts(content: Mapping[str, Any], parts: list[str]) -> dict[str, str]:
    """Every variant's template text by stored part name (``<locale>/<part>``)."""
    out = {}
    for variant in variants(content):
        for part in parts:
            if isinstance(variant.get(part), str):
                out[f"{variant['locale']}/{part}"] = variant[part]
    return out
