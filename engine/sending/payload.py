"""What a send stores: each template part rendered in its language, then the channel's
payload (exactly what the worker will send)."""

from __future__ import annotations

from typing import Any

from engine import runtime
from engine.formats import uuid_text
from engine.rendering import RenderError, make_tags, render_budget, render_part
from engine.sending.resolution import Resolved, rendering_failed

__all__ = ["payload", "render_parts", "rendering_failed"]


def render_parts(resolved: Resolved) -> tuple[dict[str, str | None], list[dict[str, str]]]:
    """Each template part rendered; errors per part (never a truncated part). All parts
    share one render budget (HERALD_RENDER_BUDGET_SECONDS): over it, rendering_failed.

    The channel names each part and the language it is written in, which decides what
    `{{x}}` escapes: a subject and an SMS are plain text, not HTML."""
    tags = make_tags(resolved.tags)
    out: dict[str, str | None] = {}
    errors: list[dict[str, str]] = []
    with render_budget(runtime.settings().render_budget_seconds):
        _render_each(resolved, tags, out, errors)
    return out, errors


def _render_each(resolved: Resolved, tags: Any, out: dict[str, str | None],
                 errors: list[dict[str, str]]) -> None:
    version = resolved.version
    content = version.content
    partials = resolved.partial_set()
    cache_key = uuid_text.of(version.id)
    for part, language in resolved.channel.template_parts(content):
        stored_part, text = resolved.part_text(part)
        if text is None:
            out[part] = None
            continue
        try:
            out[part] = render_part(version.compiled, stored_part, text, tags,
                                    cache_key=cache_key, language=language,
                                    partials=partials)
        except RenderError as err:
            out[part] = None
            errors.append({"templatePart": part, "message": str(err)})


def payload(resolved: Resolved, rendered: dict[str, str | None]) -> dict[str, Any]:
    """The notification's payload: its channel's, under the channel's name."""
    channel = resolved.channel
    built = {"channel": channel.name, **channel.payload(resolved.request, rendered)}
    if resolved.variant is not None:  # which language rendered: the reports show it
        built["variant"] = resolved.variant["locale"]
    return built
