"""Recipient resolution (D4, docs/api.md): inherited defaults, request additions, override."""

from __future__ import annotations

from typing import Any

from engine.catalog import suppression_cache
from engine.formats.addresses import dedupe, suppression_key
from engine.plugins.channel_contract import Recipients

LISTS = ("to", "cc", "bcc")

__all__ = ["Recipients", "resolve", "suppressed"]


def resolve(defaults: dict[str, list[str]], options: dict[str, Any] | None) -> Recipients:
    """D4 (docs/api.md) over already-inherited defaults (engine/catalog/defaults.py)."""
    options = options or {}
    override = [v for v in options.get("overrideRecipients") or [] if v.strip()]
    base = {"to": override, "cc": [], "bcc": []} if override else defaults
    lists = {k: dedupe([*base[k], *(options.get(k) or [])]) for k in LISTS}
    return Recipients(lists["to"], lists["cc"], lists["bcc"], was_overridden=bool(override))


def suppressed(workspace_id: Any, addresses: list[str], *, marketing: bool,
               topic: str | None = None) -> set[str]:
    """The lower-cased bare addresses among ``addresses`` on the workspace's suppression list
    for a Marketing message (of ``topic``) or not, as a preview reports them (through the
    per-process cache; delivery reads the list)."""
    return suppression_cache.suppressed(workspace_id, [suppression_key(a) for a in addresses],
                                        marketing=marketing, topic=topic)
