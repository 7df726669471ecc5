"""Which parts of a version's content are template text (the channel declares them)."""

from __future__ import annotations

from typing import Any

from engine.plugins.manager import default_registry


def template_parts(channel: str, content: dict[str, Any]) -> dict[str, str]:
    """The parts of ``content`` that are template text, as the channel declares them."""
    declared = default_registry().channel(channel).template_parts(content)
    return {part: content[part] for part, _ in declared if isinstance(content.get(part), str)}
