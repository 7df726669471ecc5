"""The hooks Herald calls; plugins implement them with ``hookimpl`` (pluggy project "herald").

Registration hooks take a ``register`` callback (as simonw/llm does): the host owns the
registry, a plugin only calls back. Event hooks are notifications and return nothing.
"""

from __future__ import annotations

from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("herald")
hookimpl = pluggy.HookimplMarker("herald")


@hookspec
def register_channels(register: Any) -> None:
    """Call ``register(name, channel)`` for each channel this plugin provides.

    A channel turns a notification payload into messages (``channel.build(payload, ctx)``).
    """


@hookspec
def register_providers(register: Any) -> None:
    """Call ``register(scheme, factory)`` for each provider URL scheme this plugin handles.

    ``factory(url, context) -> Provider``; the URL is HERALD_EMAIL_PROVIDER,
    HERALD_SMS_PROVIDER or a workspace's ``emailProvider.url``.
    """


@hookspec
def notification_accepted(notification: dict[str, Any]) -> None:
    """A notification was committed and queued (called in the API process)."""


@hookspec
def notification_delivered(notification: dict[str, Any], attempt: dict[str, Any]) -> None:
    """The provider or receiver accepted the notification."""


@hookspec
def notification_failed(notification: dict[str, Any], attempt: dict[str, Any]) -> None:
    """The notification failed for good (permanent error or attempts exhausted)."""


@hookspec
def notification_suppressed(notification: dict[str, Any], recipients: list[str]) -> None:
    """Recipients were dropped (suppression list) or newly suppressed (hard bounce)."""
