"""Provider events in, for every provider alike: the receiver a provider registered
(``register_event_webhooks``, engine/plugins/event_contract.py) reads and authenticates a
call; the reports it returns are matched to their notifications and recorded here, the
messages people sent in (SMS replies) handed to engine/inbound/sms_replies.py.

What the engine lends a receiver besides the call itself: whether a password is the
workspace's inbound secret for that provider (kept encrypted, one per workspace and
provider, rotated from Settings > Webhooks or `herald secret rotate-inbound`,
engine/inbound/workspace_secrets.py), and the provider URLs the operator configured (a
receiver finds its account's credentials there).
"""

from __future__ import annotations

from typing import Any

from config.settings import provider_urls
from engine import runtime
from engine.inbound import sms_replies, workspace_secrets
from engine.inbound.recording import record_provider_report
from engine.plugins.event_contract import EventWebhook, InboundMessage, ProviderEvent
from engine.plugins.manager import default_registry


def receiver(name: str, per_workspace: bool) -> EventWebhook | None:
    """The receiver registered under ``name`` for a URL with (or without) a workspace."""
    found = default_registry().event_webhooks.get(name)
    return found if found is not None and bool(found.per_workspace) == per_workspace else None


def workspace_secret_matches(workspace_id: Any, provider: str, password: str) -> bool:
    """Whether ``password`` is the workspace's current inbound secret for ``provider``
    (False for an unknown workspace, or another provider's secret); constant time."""
    return workspace_secrets.authentic(workspace_id, provider, password)


def configured_provider_urls(scheme: str) -> list[str]:
    """Every provider URL of the email and SMS settings whose scheme is ``scheme``."""
    settings = runtime.settings()
    return [url for setting in (settings.email_provider, settings.sms_provider)
            for url in provider_urls(setting or "") if url.partition("://")[0] == scheme]


def record(events: list[ProviderEvent | InboundMessage], workspace_id: Any = None) -> bool:
    """Record each report on its notification (of ``workspace_id`` only, when given) and
    each inbound message (engine/inbound/sms_replies.py); True when one was recorded."""
    recorded = False
    for event in events:
        if isinstance(event, InboundMessage):
            continue  # replies(): the receiver's answer depends on them
        message_id, report = event
        recorded = record_provider_report(message_id, report, workspace_id=workspace_id) \
            or recorded
    return recorded


def replies(events: list[ProviderEvent | InboundMessage]) -> list[str]:
    """Record the call's inbound messages and do what their keywords ask; the replies to
    send back (a HELP's answer)."""
    return [answer for event in events if isinstance(event, InboundMessage)
            if (answer := sms_replies.receive(event))]
