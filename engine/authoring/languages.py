"""What the editor says about a version's languages: the tags each (the version's own text
and each variant) uses, and the tags a variant leaves out that the version's own text
uses: a translation that dropped `{{orderId}}` is a mail without its order number."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.catalog.variants import part_text, variants
from engine.plugins.manager import default_registry
from engine.rendering import variable_metadata


@dataclass(frozen=True)
class Language:
    """``tag`` None: the version's own text (`Default`)."""

    tag: str | None
    uses: list[str]
    lacks: list[str]

    @property
    def label(self) -> str:
        return "Default" if self.tag is None else self.tag

    @property
    def key(self) -> str:
        return "default" if self.tag is None else self.tag


def _uses(texts: list[str]) -> list[str]:
    return variable_metadata([t for t in texts if t], {})["missingVariables"]


def languages(channel: str, content: dict[str, Any]) -> list[Language]:
    """The version's own text first, then each variant, with the tags they use."""
    parts = [p for p, _ in default_registry().channel(channel).template_parts(content)]
    own = _uses([content.get(p) or "" for p in parts])
    out = [Language(None, own, [])]
    for variant in variants(content):
        uses = _uses([part_text(content, variant, p)[1] or "" for p in parts])
        have = {name.lower() for name in uses}
        out.append(Language(variant["locale"], uses,
                            [name for name in own if name.lower() not in have]))
    return out
