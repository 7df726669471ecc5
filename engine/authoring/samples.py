"""Sample tags: the JSON object an author previews and test-sends with, remembered per
template. The API's tag rules apply (spec 8.1), so a sample that previews is one the
integrator snippets can send."""

from __future__ import annotations

import json
from typing import Any

from engine.database.models import Template, TemplateSample, utcnow
from engine.formats.json_limits import holds_surrogate
from engine.sending.validation import MAX_TAG_KEY, MAX_TAG_VALUE, MAX_TAGS


class SampleError(ValueError):
    """Sample tags that are not a JSON object of short scalar values."""


def _text(key: str, value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, int | float):
        return json.dumps(value)
    raise SampleError(f"“{key}”: a tag's value is text (or a number), not a list or object.")


def parse(text: str | None) -> dict[str, str]:
    """``{"name": "Ada"}`` -> tags; an empty box is no tags. Raises SampleError."""
    if not text or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as err:
        raise SampleError(f"not valid JSON: {err}") from None
    except RecursionError:
        raise SampleError("not valid JSON: nested too deeply") from None
    if not isinstance(value, dict):
        raise SampleError('a JSON object is needed, such as {"name": "Ada"}')
    if len(value) > MAX_TAGS:
        raise SampleError(f"at most {MAX_TAGS} tags")
    tags: dict[str, str] = {}
    for key, item in value.items():
        if not key.strip():
            raise SampleError("a tag needs a name")
        if len(key) > MAX_TAG_KEY:
            raise SampleError(f"a tag's name has at most {MAX_TAG_KEY} characters")
        tags[key] = _text(key, item)
        if holds_surrogate(key) or holds_surrogate(tags[key]):
            raise SampleError("a tag holds a lone UTF-16 surrogate (\\ud800-\\udfff), "
                              "which is not text")
        if len(tags[key]) > MAX_TAG_VALUE:
            raise SampleError(f"“{key}”: a tag's value has at most {MAX_TAG_VALUE:,} "
                              "characters")
    return tags


def dumps(tags: dict[str, str]) -> str:
    return json.dumps(tags, ensure_ascii=False, indent=2) if tags else "{}"


def remembered(template: Template) -> dict[str, str]:
    row = TemplateSample.get_or_none(TemplateSample.template == template)
    return dict(row.tags) if row else {}


def remember(template: Template, tags: dict[str, str]) -> None:
    """Keep the sample for the next editor of this template (written only when it changed)."""
    row = TemplateSample.get_or_none(TemplateSample.template == template)
    if row is None:
        if tags:
            TemplateSample.create(template=template, tags=tags)
    elif row.tags != tags:
        TemplateSample.update(tags=tags, updated_at=utcnow()).where(
            TemplateSample.template == template).execute()
