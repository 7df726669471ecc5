"""The webhook channel: a template's rendered body POSTed, signed, to the request's URL.

The delivery itself (destination policy, signing, the pinned request, retry classes) is the
engine's (engine/webhooks/): the receiver is the destination, so there is no provider.
"""

from __future__ import annotations

from engine.plugin_api import hookimpl


class WebhookChannel:
    """Registered like any channel; it needs no provider (the receiver is the destination)."""

    name = "webhook"
    needs_provider = False


@hookimpl
def register_channels(register) -> None:
    register("webhook", WebhookChannel())
