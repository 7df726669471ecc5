"""Which parts of a version's content are template text (the channel declares them)."""

from __future__ import annotations

from typing import Any

from engine.plugins.manager import default_registry


def template_parts(channel: str, content: dict[str, Any]) -> dict[str, str]:
    """The parts of ``content`` that are template text, as the channel declares them."""
    declared = default_registry().channel(channel).template_parts(content)
    return {part: content[part] for part, _ in declared if isinstance(content.get(part), str)}


def all_parts(channel: str, content: dict[str, Any]) -> dict[str, str]:
    """The version's own template parts and each language variant's, the latter named
    ``<locale>/<part>`` (engine/catalog/variants.py): what publish checks and compiles."""
    from engine.catalog.variants import variant_parts

    own = template_parts(channel, content)
    declared = [part for part, _ in default_registry().channel(channel).template_parts(content)]
    return {**own, **variant_parts(content, declared)}
