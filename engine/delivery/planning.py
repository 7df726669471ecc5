"""Planning a delivery: the engine's side of it, lent to the notification's channel, which
decides the messages (``Channel.plan``): the suppression list as the claim read it, the
recipients an earlier attempt settled, and the signed tracking and unsubscribe links."""

from __future__ import annotations

import functools
from typing import Any

from engine import runtime
from engine.database import generations, notification_store
from engine.database.models import DeliveryAttempt, Notification
from engine.database.vocabulary import Outcome, stops
from engine.delivery.providers import uses_own_provider
from engine.delivery.return_path import envelope_sender
from engine.delivery.tracking import TrackedHtml, unsubscribe_url
from engine.plugins.channel_contract import Channel, Plan, PlannedDelivery
from engine.senders.identity import sender_additions


class _TrackedHtml:
    """The payload's HTML with the open pixel and click links its options ask for, for one
    recipient at a time: the body is searched once for a plan (a fan-out asks once a
    recipient, with the same HTML each time) and only signed for each."""

    def __init__(self, notification_id: str) -> None:
        self.notification_id = notification_id
        self.made: tuple[str, bool, bool, TrackedHtml] | None = None

    def __call__(self, payload: dict[str, Any], recipient: str | None) -> str | None:
        html = payload.get("html")
        if html is None:
            return None
        opens, clicks = bool(payload.get("trackOpens")), bool(payload.get("trackClicks"))
        made = self.made  # lanes ask at once: each reads one whole tuple
        if made is None or made[0] is not html or made[1:3] != (opens, clicks):
            made = self.made = (html, opens, clicks,
                                TrackedHtml(html, track_opens=opens, track_clicks=clicks))
        return made[3].render(self.notification_id, recipient)


def is_marketing(payload: dict[str, Any]) -> bool:
    """Whether a payload is of the Marketing stream, which a Marketing-only suppression (an
    unsubscribe) stops too. Only email has the two streams (spec 2.2, the version's email
    type); an SMS or a webhook, like Transactional email, is stopped by ``all`` rows only."""
    return payload.get("emailType") == "Marketing"


def _suppressed(notification: Notification, keys: list[str]) -> set[str]:
    """The keys among ``keys`` suppressed for this notification's stream: read by the claim
    when the payload lists exactly these keys (a row queued before the keys were spelt as
    now lists others: asked again)."""
    marketing = is_marketing(notification.payload or {})
    topic = (notification.payload or {}).get("topic") if marketing else None
    known = getattr(notification, "suppressed_keys", None)
    wanted = set(keys)
    if known is not None and wanted.issubset(notification.payload["suppressionKeys"]):
        return {key for key in wanted & known.keys() if stops(known[key], marketing, topic)}
    return notification_store.suppressed(notification.workspace_id, keys, marketing=marketing,
                                         topic=topic)


def _settled_recipients(notification: Notification) -> dict[str, str]:
    """The recipients of a fan-out that an earlier attempt settled, with how: delivered,
    permanent or suppressed. Only a transient outcome is tried again: a permanent one would
    fail the same way (or, its outcome unknown, might be sent twice)."""
    rows = DeliveryAttempt.select(DeliveryAttempt.recipient, DeliveryAttempt.outcome).where(
        DeliveryAttempt.notification == notification, DeliveryAttempt.outcome != Outcome.TRANSIENT,
        DeliveryAttempt.recipient.is_null(False)).tuples()
    # Tuples, not model rows: each slice of a fan-out that yields the worker reads them all.
    return dict(rows)


def _payload(channel: Channel, notification: Notification) -> dict[str, Any]:
    """The payload, with what a verified sender adds to a channel whose versions name one
    (its ``sender_field``: email) through the service's provider: the DKIM key, the
    envelope sender at the return-path host, the postal footer of a single sender's
    Marketing mail (docs/senders.md)."""
    payload = notification.payload
    if channel.sender_field is None:
        return payload
    # Both scopes in one read, for the whole delivery (generations.read_once): the own
    # provider is asked here and again when the provider is chosen, the sender below.
    generations.refresh([generations.workspace_scope(notification.workspace_id),
                         generations.account_scope(notification.account_id)])
    if uses_own_provider(notification.workspace_id):
        return payload
    added = sender_additions(notification.account_id, payload)
    host = added.pop("returnPathHost", None) or runtime.settings().return_path_domain
    if host:
        # One envelope sender per recipient (the channel asks for each): a report to it
        # speaks for that recipient only (docs/reports.md, `herald bounces`).
        added["envelopeSenderFor"] = functools.partial(envelope_sender, notification.id, host)
    return {**payload, **added} if added else payload


def plan(channel: Channel, notification: Notification) -> Plan:
    """The channel's plan for this attempt of the notification."""
    nid = str(notification.id)
    return channel.plan(PlannedDelivery(
        notification_id=nid, attempt=notification.attempts, payload=_payload(channel, notification),
        suppressed=functools.partial(_suppressed, notification),
        settled=functools.partial(_settled_recipients, notification),
        tracked_html=_TrackedHtml(nid),
        unsubscribe_url=functools.partial(unsubscribe_url, nid,
                                          workspace_id=str(notification.workspace_id),
                                          topic=(notification.payload or {}).get("topic"))))
