"""The hooks Herald calls; plugins implement them with ``hookimpl`` (pluggy project "herald").

Registration hooks take a ``register`` callback (as simonw/llm does): the host owns the
registry, a plugin only calls back. Event hooks are notifications and return nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

from engine.plugins.channel_contract import Channel
from engine.plugins.contracts import ProviderFactory
from engine.plugins.event_contract import EventWebhook

hookspec = pluggy.HookspecMarker("herald")
hookimpl = pluggy.HookimplMarker("herald")


@hookspec
def register_channels(register: Callable[[str, Channel], None]) -> None:
    """Call ``register(name, channel)`` for each channel this plugin provides.

    ``channel`` follows the channel contract (engine/plugins/channel_contract.py): what its
    versions hold, its request options and rules, its payload, its delivery plan, and
    ``build(payload)``, which turns one planned message into what its provider sends.
    """


@hookspec
def register_providers(register: Callable[[str, ProviderFactory], None]) -> None:
    """Call ``register(scheme, factory)`` for each provider URL scheme this plugin handles.

    ``factory(url, context) -> Provider``; the URL is a channel's provider setting
    (HERALD_EMAIL_PROVIDER, HERALD_SMS_PROVIDER) or a workspace's ``emailProvider.url``,
    and the factory only parses it (it is called at start-up to check it).
    """


@hookspec
def register_event_webhooks(register: Callable[[str, EventWebhook], None]) -> None:
    """Call ``register(name, receiver)`` for each webhook by which a provider reports what
    became of its messages (deliveries, bounces, complaints).

    Herald serves ``receiver`` at ``/api/inbound/<name>`` (``/api/inbound/<name>/<workspace
    id>`` when ``receiver.per_workspace``); ``receiver.events(call)`` authenticates the call
    and returns its events (engine/plugins/event_contract.py), which Herald matches to
    their notifications by the provider's message id and records.
    """


@hookspec
def notification_accepted(notification: dict[str, Any]) -> None:
    """A send was accepted: its row committed and its job enqueued (called in the API
    process, before the 202 is answered). ``notification`` has id, channel, workspaceId and
    status ("queued")."""


@hookspec
def notification_delivered(notification: dict[str, Any], attempt: dict[str, Any]) -> None:
    """The provider or receiver accepted the notification; ``attempt`` is the recorded
    attempt row (outcome, status_code, duration_ms, error, ...). Called in the worker once
    the outcome is committed."""


@hookspec
def notification_failed(notification: dict[str, Any], attempt: dict[str, Any]) -> None:
    """The notification failed for good (a permanent error, or its attempts exhausted);
    ``attempt`` is its last recorded attempt ({} when none was recorded)."""


@hookspec
def notification_suppressed(notification: dict[str, Any], recipients: list[str]) -> None:
    """``recipients`` were dropped (on the suppression list) or newly suppressed (a hard
    bounce, an unsubscribed number) by this attempt."""
