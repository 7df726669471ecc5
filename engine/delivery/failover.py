"""Provider failover for deliveries: an ordered list of providers tried in turn within one
attempt (the rule: engine/plugins/provider_order.py), each behind a circuit breaker shared
by every worker (engine/delivery/breaker.py), so a dead provider is skipped without a
connection while its breaker is open.

The attempt row records which provider took the message (``delivered_via``), which were
tried with their outcomes (``providers_tried``) and the scheme of the one that answered
last (``provider``, the reports' column).
"""

from __future__ import annotations

import json
from typing import Any

from engine.delivery import breaker
from engine.plugins.contracts import SendResult
from engine.plugins.provider_order import Candidate, send_in_order

# (plugin or None for the URL's scheme, url)
ProviderEntry = tuple[str | None, str]


def setting_entries(setting: str) -> list[ProviderEntry]:
    """HERALD_EMAIL_PROVIDER / HERALD_SMS_PROVIDER: URLs separated by whitespace."""
    return [(None, url) for url in setting.split()]


def workspace_entries(stored: str) -> list[ProviderEntry]:
    """A workspace's ``emailProvider`` as stored: one {plugin, url} or an ordered list."""
    value = json.loads(stored)
    items = value if isinstance(value, list) else [value]
    return [(item.get("plugin"), item.get("url", "")) for item in items]


class FailoverProvider:
    """The providers of one setting in order, behind the one ``send`` a channel calls."""

    def __init__(self, candidates: list[Candidate]) -> None:
        self.candidates = candidates
        primary = candidates[0].provider
        self.channel = getattr(primary, "channel", None)
        # A fan-out's lanes: as many as the first provider keeps connections.
        self.max_concurrency = getattr(primary, "max_concurrency", 1)

    def send(self, message: Any) -> SendResult:
        return send_in_order(self.candidates, message, gate=breaker)


def annotate(row: dict[str, Any], outcome: Any) -> None:
    """Copy what a provider list recorded onto an attempt row (nothing for one provider)."""
    tried = getattr(outcome, "providers_tried", None)
    if tried is not None:
        row["delivered_via"] = getattr(outcome, "delivered_via", None)
        row["providers_tried"] = tried
        row["provider"] = getattr(outcome, "provider_scheme", None) or row.get("provider")
