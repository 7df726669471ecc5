"""Provider failover: an ordered list of providers tried in turn within one attempt.

A connection failure, a timeout or an answer the provider marks temporary moves the message
to the next provider at once; a permanent answer (a hard bounce, refused content, refused
credentials) ends the attempt where it was given: another provider would only say the same
about the recipient, or hide a misconfiguration. A provider whose breaker is open
(engine/delivery/breaker.py) is skipped without a connection.

Every result and error leaving ``FailoverProvider.send`` carries ``delivered_via`` (the
label of the provider that took the message) and ``providers_tried`` (each provider with
its outcome, in order), which the attempt row records (engine/delivery/outcomes.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from engine.delivery import breaker
from engine.plugins.contracts import (
    DeliveryError,
    PermanentError,
    Provider,
    SendResult,
    SuppressedError,
    TransientError,
)

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


def label(plugin: str | None, url: str) -> str:
    """How a provider is named in attempt rows: its scheme, host and port, never its
    credentials, path or options (``smtp://mx1.example:587``, ``inbox://``)."""
    parts = urlsplit(url)
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    name = plugin or parts.scheme
    return f"{name}://{parts.hostname or ''}{port}"


@dataclass(frozen=True)
class Member:
    label: str
    provider: Provider
    breaker_key: str


def _tried(member: Member, outcome: str, error: BaseException | None) -> dict[str, Any]:
    return {"provider": member.label, "outcome": outcome,
            "error": str(error)[:500] if error is not None else None}


def _outcome_of(err: DeliveryError) -> str:
    if isinstance(err, SuppressedError):
        return "suppressed"
    return "permanent" if isinstance(err, PermanentError) else "transient"


class FailoverProvider:
    """The providers of one setting in order, behind the one ``send`` a channel calls."""

    def __init__(self, members: list[Member]) -> None:
        self.members = members
        primary = members[0].provider
        self.channel = getattr(primary, "channel", None)
        # A fan-out's lanes: as many as the first provider keeps connections.
        self.max_concurrency = getattr(primary, "max_concurrency", 1)

    def send(self, message: Any) -> SendResult:
        tried: list[dict[str, Any]] = []
        last: DeliveryError | None = None
        last_member: Member | None = None
        waits: list[float] = []
        for member in self.members:
            admission = breaker.admit(member.breaker_key)
            if not admission.allowed:
                tried.append({"provider": member.label, "outcome": "skipped",
                              "error": "circuit open"})
                waits.append(admission.wait)
                continue
            last_member = member
            try:
                result = member.provider.send(message)
            except (TransientError, OSError) as err:
                breaker.failed(member.breaker_key)
                tried.append(_tried(member, "transient", err))
                last = err if isinstance(err, TransientError) else TransientError(
                    f"{type(err).__name__}: {err}")
                continue
            except DeliveryError as err:  # the provider answered: it is up
                breaker.succeeded(member.breaker_key, admission)
                tried.append(_tried(member, _outcome_of(err), err))
                raise _annotated(err, member, False, tried) from None
            breaker.succeeded(member.breaker_key, admission)
            tried.append(_tried(member, "delivered", None))
            return _annotated(result, member, True, tried)
        if last is None:  # every provider skipped: try again when the first may be probed
            last = TransientError("every provider is skipped while its circuit is open",
                                  retry_after=min(waits) if waits else None)
        raise _annotated(last, last_member, False, tried) from None


def _annotated(value: Any, member: Member | None, delivered: bool,
               tried: list[dict[str, Any]]) -> Any:
    value.delivered_via = member.label if delivered and member else None
    # The scheme of the provider that answered last (the reports' provider column).
    value.provider_scheme = member.label.partition("://")[0] if member else None
    value.providers_tried = tried
    return value


def annotate(row: dict[str, Any], outcome: Any) -> None:
    """Copy what a FailoverProvider recorded onto an attempt row (nothing for one provider)."""
    tried = getattr(outcome, "providers_tried", None)
    if tried is not None:
        row["delivered_via"] = getattr(outcome, "delivered_via", None)
        row["providers_tried"] = tried
        row["provider"] = getattr(outcome, "provider_scheme", None) or row.get("provider")
