"""The event webhook contract: how a provider brings the events it reports after a send
(a delivery, a bounce, a complaint) into Herald, beside its plugin (docs/plugins.md,
"Provider events").

A provider registers a receiver with ``register_event_webhooks(register)``; Herald serves
it at ``/api/inbound/<name>`` (or ``/api/inbound/<name>/<workspace id>`` when the receiver
is ``per_workspace``), one generic route for every provider. A per-workspace call is
authenticated by Herald before the receiver sees it: each workspace has its own inbound
secret for each such provider (made, kept, rotated and put into the URL by Herald, carried
as ``secret_in`` says). Any other receiver authenticates its calls itself (a signature).
The receiver reads the events; Herald matches each to its notification by the provider's
message id and records it. The engine's side of a call is an object passed in
(``InboundCall``), so a provider needs nothing else of Herald's.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Reported:
    """One provider report, before it is matched to its notification: ``kind`` is one of
    delivered, bounced, soft_bounced, deferred, complained; ``dedupe_key`` makes a report
    delivered twice count once."""

    kind: str
    recipient: str | None
    source: str
    detail: str | None = None
    dedupe_key: str | None = None
    occurred_at: dt.datetime | None = None


# One event of a call: the provider's message id (as its send returned it in
# SendResult.provider_message_id) and what it reports.
ProviderEvent = tuple[str, Reported]


@dataclass(frozen=True)
class InboundMessage:
    """A message someone sent to one of the service's numbers (an SMS reply: STOP, START,
    HELP or anything else), as a receiver returns it beside its ProviderEvents.
    ``message_id`` is the provider's id of it: one delivered twice is recorded once."""

    sender: str       # the person's number ("from")
    recipient: str    # the number they wrote to ("to")
    text: str
    message_id: str
    source: str       # the provider's name
    received_at: dt.datetime | None = None


class InboundRefused(Exception):
    """Raised by a receiver to refuse the call: answered as problem details with
    ``status`` (401 or 403 for a call that does not authenticate, 400 for a body it cannot
    read) and nothing recorded."""

    def __init__(self, status: int, detail: str,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.headers = status, detail, dict(headers or {})


class InboundCall(Protocol):
    """A call to a receiver, as Herald lends it. Reading the body (``json``, ``form``)
    refuses a body over the inbound limit (413), so a receiver that authenticates first
    reads nothing of a forged call."""

    workspace_id: str | None    # the URL's workspace (per_workspace receivers, already
                                # authenticated by its secret), as given
    headers: Mapping[str, str]
    args: Mapping[str, str]     # the query string's parameters
    urls: Sequence[str]         # the URL the provider was told (HERALD_PUBLIC_URL), then
                                # the URL as this server saw it (a signature may sign either)

    def basic_password(self) -> str | None: ...

    def json(self) -> Any: ...

    def form(self) -> list[tuple[str, str]]: ...

    def workspace_secret_matches(self, password: str) -> bool:
        """Whether ``password`` is the URL's workspace's inbound secret for this provider
        (Herald has checked the call's already; for a receiver that reads it elsewhere)."""
        ...

    def provider_urls(self, scheme: str) -> list[str]: ...


class EventWebhook(Protocol):
    """What a provider plugin registers with ``register(name, receiver)``. A receiver that
    reads inbound messages may also answer one in the call's response (as Twilio reads
    TwiML): ``answer(text) -> (body, content type)``, asked for a HELP's reply."""

    per_workspace: bool    # the URL names the workspace (its secret authenticates the call)
    acknowledgement: str   # "recorded": 200 {"recorded": bool}; "empty": 204
    # Optional, for per_workspace receivers: how the URL Herald prints carries the secret,
    # "basic" (the default: https://herald:SECRET@host/...) or "query" (...?token=SECRET);
    # Herald accepts either on a call. ``label``: the provider as people name it (Settings
    # > Webhooks, the audit log); the registered name when absent.
    secret_in: str
    label: str

    def events(self, call: InboundCall) -> list[ProviderEvent | InboundMessage]: ...
