"""The `herald apply` document: the name rule, each channel's version fields (declared by the
channel), and what an apply reports (its problems, or what it did)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class ApplyError(ValueError):
    """The document is invalid; ``problems`` lists every fault with its path."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass
class Outcome:
    """What one apply did: counts per kind and the keys it created (shown this once)."""

    created: dict[str, int] = field(default_factory=dict)
    updated: dict[str, int] = field(default_factory=dict)
    api_keys: list[dict[str, Any]] = field(default_factory=list)
    workspaces: list[dict[str, Any]] = field(default_factory=list)
    # Templates created by this apply: a file may leave ids out, the caller needs them to send.
    templates: list[dict[str, Any]] = field(default_factory=list)

    def count(self, bucket: dict[str, int], kind: str, n: int = 1) -> None:
        bucket[kind] = bucket.get(kind, 0) + n

    def as_json(self) -> dict[str, Any]:
        return {
            "changed": bool(self.created or self.updated),
            "created": self.created,
            "updated": self.updated,
            "workspaces": self.workspaces,
            "apiKeys": self.api_keys,
            "templates": self.templates,
        }


NAME_RULE = "a non-empty name of at most 200 characters is required"


def valid_name(value: object) -> bool:
    """The rule for every name a file gives (and `herald keys create`, so that what export
    prints of a key applies again)."""
    return isinstance(value, str) and bool(value.strip()) and len(value) <= 200



def version_fields(channel: str) -> tuple[str, ...]:
    """The content fields of a version of ``channel``, as the channel declares them."""
    from engine.plugins.manager import default_registry

    return default_registry().channel(channel).content_fields


def version_content(channel: str, node: dict[str, Any]) -> dict[str, Any]:
    """The stored content of a version: every field of its channel, defaults filled in."""
    from engine.plugins.manager import default_registry

    declared = default_registry().channel(channel)
    content: dict[str, Any] = {key: None for key in declared.content_fields}
    content.update(declared.content_defaults)
    content.update({key: node[key] for key in declared.content_fields if key in node})
    return content


def version_extras(channel: str, node: dict[str, Any],
                   stored: dict[str, Any] | None) -> dict[str, Any]:
    """A version's `variants` and `inlineCss` (docs/rendering.md): as the file gives them;
    left out, what the stored version has, and for a new version of a channel that inlines
    CSS (email: ``inlines_css``) inlining on."""
    out: dict[str, Any] = {}
    if "variants" in node:
        out["variants"] = [dict(v) for v in node["variants"] or []]
    elif stored is not None and "variants" in stored:
        out["variants"] = stored["variants"]
    if "inlineCss" in node:
        out["inlineCss"] = node["inlineCss"]
    elif stored is not None:
        if "inlineCss" in stored:
            out["inlineCss"] = stored["inlineCss"]
    else:
        from engine.plugins.manager import default_registry

        if default_registry().channel(channel).inlines_css:
            out["inlineCss"] = True
    return out
