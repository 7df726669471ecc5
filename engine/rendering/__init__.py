"""Handlebars rendering for templates written by untrusted workspace users.

See docs/rendering.md. Publish: `check_template` / `compile_parts` (store the JSON with the
version). Send and preview: `render_part` per part, `variable_metadata` for preview.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping

from .cache import LRU
from .compiler import ENGINE_VERSION, VERSION_KEY, check_template, compile_parts, compile_template
from .errors import RenderError, TemplateSyntaxError
from .metadata import variable_metadata
from .runtime import MAX_PART_CHARS, InvalidProgram, load
from .values import Tags, make_tags

__all__ = [
    "ENGINE_VERSION", "MAX_PART_CHARS", "VERSION_KEY", "RenderError", "TemplateSyntaxError",
    "check_template", "compile_parts", "make_tags", "render_part", "variable_metadata",
]

_loaded = LRU(maxsize=512)


def _from_stored(stored: str, part: str):
    try:
        doc = json.loads(stored)
        if not isinstance(doc, dict) or doc.get("key") != VERSION_KEY:
            return None
        program = doc["parts"][part]
        return load(program)
    except (ValueError, TypeError, KeyError, RecursionError, InvalidProgram) as exc:
        logging.getLogger(__name__).warning("stored template code unusable (%s); recompiling",
                                            type(exc).__name__)
        return None


def _renderer(stored: str | None, part: str, text: str):
    fn = _from_stored(stored, part) if stored else None
    if fn is None:
        try:
            fn = load(compile_template(text or ""))
        except TemplateSyntaxError as exc:
            raise RenderError(str(exc)) from exc
    return fn


def render_part(stored: str | None, part: str, text: str, tags: Mapping[str, str],
                cache_key: str | None = None) -> str:
    """Render one part with the version's stored code (or `text`, compiled with a bound).

    `cache_key` names immutable content (a published version id); with it the loaded
    function is kept in a per-process LRU. Raises RenderError.
    """
    if cache_key is None:
        fn = _renderer(stored, part, text)
    else:
        key = (cache_key, part, hash(text))
        fn = _loaded.get(key)
        if fn is None:
            fn = _renderer(stored, part, text)
            _loaded.put(key, fn)
    context = tags if tags.__class__ is Tags else make_tags(tags)
    return fn(context)  # type: ignore[operator]
