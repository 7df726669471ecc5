"""Mail the web application sends itself: invitations, reset links and a provider's test.

Sent at once, through a provider built for the one message (the system's, or a workspace's
own for its test), not through the notification pipeline: these are not a workspace's
notifications, count against no allowance and appear in no report.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from engine import runtime
from engine.database.models.inbox import InboxMessage
from engine.plugins.contracts import DeliveryError, Egress, ProviderContext, SendResult
from engine.plugins.manager import default_registry, open_provider
from engine.plugins.provider_order import Candidate, label, send_in_order


def system_sender() -> str:
    """HERALD_MAIL_FROM, else no-reply at the public URL's host."""
    settings = runtime.settings()
    configured = getattr(settings, "mail_from", None)
    if configured:
        return configured
    host = urlsplit(settings.public_url).hostname or "localhost"
    if host.replace(".", "").isdigit() or ":" in host:
        host = "localhost"  # an address literal makes no mailbox a provider accepts
    return f"no-reply@{host}"


def _store_in_inbox(workspace_id: str | None):
    def store(data: dict[str, Any]) -> None:
        InboxMessage.create(workspace_id=workspace_id, notification_id=None, **data)
    return store


def send(to: str, subject: str, text: str, url: str | None = None, plugin: str | None = None,
         workspace_id: str | None = None, sender: str | None = None,
         entries: list[tuple[str | None, str]] | None = None,
         egress: Egress | None = None) -> SendResult:
    """Send one plain-text message through ``url`` (default: HERALD_EMAIL_PROVIDER), or
    through ``entries`` ((plugin, url) in order): a list fails over as deliveries do
    (engine/plugins/provider_order.py; no circuit breaker for mail this rare), and its
    result or error says which provider took it.

    ``egress``: a workspace's own provider connects only where the engine allows (its
    test on the Email provider page); the system's own setting is trusted.

    Raises DeliveryError (the provider's answer), LookupError or ValueError (no plugin
    takes a URL, or it refuses it).
    """
    settings = runtime.settings()
    if not entries:
        entries = [(plugin, url)] if url else [(None, u) for u in settings.email_provider.split()]
    if not entries:
        raise DeliveryError("no email provider is configured (HERALD_EMAIL_PROVIDER)")
    payload = {"from": {"address": sender or system_sender(), "name": "Herald"},
               "to": [to], "cc": [], "bcc": [], "subject": subject, "html": None,
               "text": text, "headers": {}, "attachments": []}
    message = default_registry().served_by("HERALD_EMAIL_PROVIDER").build(payload)
    context = ProviderContext(_store_in_inbox(workspace_id), settings, egress)
    opened: list[Any] = []
    try:
        for entry_plugin, entry_url in entries:
            opened.append(open_provider(entry_url, context, entry_plugin))
        if len(opened) == 1:
            return opened[0].send(message)
        return send_in_order([Candidate(label(p, u), provider)
                              for (p, u), provider in zip(entries, opened, strict=True)],
                             message)
    finally:
        for provider in opened:
            close = getattr(provider, "close", None)
            if callable(close):
                close()
