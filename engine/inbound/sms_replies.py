"""SMS replies (docs/delivery.md, "SMS keywords"): what someone texts back to a number the
service sent them SMS from, as the provider's receiver reads it (plugins/twilio/events.py).

Each message is recorded once (by the provider's id of it) for the workspace that last
sent to that person from that number, shown in its Reports and called back. Its keyword,
the whole message trimmed and case-insensitive as carriers read it: STOP and its
synonyms suppress the number for that workspace's SMS, START and its synonyms lift that,
HELP is answered with the workspace's help text. A message from a number no workspace
sent to is recorded for the operator and does nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from peewee import IntegrityError, fn

from engine.callbacks import inbound as inbound_callbacks
from engine.catalog import sms_help, suppressions
from engine.database.db import database
from engine.database.models import Account, Notification, Workspace, utcnow
from engine.database.models.recipients import InboundMessage as InboundRow
from engine.database.models.reports import NotificationLookup
from engine.database.vocabulary import SuppressionScope
from engine.formats.addresses import suppression_key, valid_e164
from engine.plugins.event_contract import InboundMessage
from engine.plugins.manager import default_registry
from engine.reports.lookup import tail_from

log = logging.getLogger("herald.inbound")

STOP = frozenset({"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"})
START = frozenset({"START", "YES", "UNSTOP"})
HELP = frozenset({"HELP"})
# What a STOP writes, and what a START may lift: a STOP, and the bounce the provider
# recorded when it refused the number for having said STOP (Twilio's 21610).
STOP_REASON = "stop"
LIFTED_REASONS = (STOP_REASON, "bounce")
MAX_TEXT = 1600  # Twilio's longest message
# The newest SMS sends to the number looked at for one from the number written to.
CANDIDATES = 50


def keyword(text: str) -> str | None:
    """``stop``, ``start``, ``help`` or None for the message's text."""
    word = text.strip().rstrip(".!").strip().upper()
    for name, words in (("stop", STOP), ("start", START), ("help", HELP)):
        if word in words:
            return name
    return None


def receive(message: InboundMessage) -> str | None:
    """Record the message and do what its keyword asks; the reply to send back (HELP's
    answer), or None."""
    sender = suppression_key(message.sender)[:40]
    recipient = message.recipient.strip()[:40]
    # Only a number the service could have sent to is looked for (and ever suppressed).
    workspace_id = last_sender(sender, recipient) if valid_e164(sender) else None
    word = keyword(message.text)
    received_at = (message.received_at or utcnow()).replace(tzinfo=None)
    text = message.text[:MAX_TEXT]
    try:
        with database.atomic():
            InboundRow.create(workspace=workspace_id, provider=message.source[:40],
                              message_id=message.message_id[:200], sender=sender,
                              recipient=recipient, text=text, keyword=word,
                              received_at=received_at)
    except IntegrityError:
        return None  # delivered twice: done the first time
    if workspace_id is None:
        log.info("inbound %s from a number no workspace sent to: recorded only", message.source)
        return None
    if word == "stop":
        suppressions.add(workspace_id, [sender], STOP_REASON, SuppressionScope.ALL)
    elif word == "start":
        suppressions.lift(workspace_id, sender, [SuppressionScope.ALL], LIFTED_REASONS)
    inbound_callbacks.received(workspace_id, sender, recipient, text, received_at)
    return sms_help.help_text(workspace_id) if word == "help" else None


def _phone_channels() -> list[str]:
    """The channels that send to phone numbers (their ``recipient_kind``): SMS."""
    return [c.name for c in default_registry().ordered_channels() if c.recipient_kind == "phone"]


def last_sender(number: str, sender: str) -> Any:
    """The workspace that last sent SMS to ``number`` from ``sender`` (a version or send
    that named no number used the provider's: it counts for any), or None.

    Through the report job's lookup index, and for the rows it has not reached yet, the
    rows themselves, across every workspace (each account's notifications by time)."""
    phones = _phone_channels()
    # Every workspace named, so that the index (workspace, kind, term) serves the search.
    indexed = NotificationLookup.select(NotificationLookup.notification).where(
        NotificationLookup.workspace.in_(Workspace.select(Workspace.id)),
        NotificationLookup.kind == "r", NotificationLookup.term == number)
    recent = Notification.select(Notification.id).where(
        Notification.account.in_(Account.select(Account.id)),
        Notification.channel.in_(phones), _position(Notification.payload, _needle(number)) > 0)
    since = tail_from()
    if since is not None:
        recent = recent.where(Notification.created_at >= since)
    rows = (Notification.select(Notification.workspace, Notification.payload)
            .where(Notification.channel.in_(phones), Notification.is_test == False,  # noqa: E712
                   Notification.id.in_(indexed) | Notification.id.in_(recent))
            .order_by(Notification.created_at.desc()).limit(CANDIDATES))
    for row in rows:
        used = (row.payload or {}).get("from")
        if not used or used == sender:
            return row.workspace_id
    return None


def _position(column: Any, needle: str) -> Any:
    """Where ``needle`` is in the column's text (0: nowhere): a plain substring, never a
    pattern."""
    sqlite = database.obj.__class__.__name__.startswith("Sqlite")
    return (fn.INSTR if sqlite else fn.STRPOS)(column, needle)


def _needle(number: str) -> str:
    """The number as a JSON string (a payload's suppressionKeys holds it so)."""
    return f'"{number}"'
