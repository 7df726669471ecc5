"""`herald bounces`: the SMTP listener of the return-path domain (aiosmtpd).

It takes mail only for the VERP addresses Herald sends from (engine/delivery/
return_path.py; any other recipient is refused with 550, and a forged tag names nothing),
reads each message as a DSN or ARF report (mail_reports.py) and records what it says
about that notification's recipients. A report it cannot read is logged and dropped with a
250, so the sender does not retry it; a database it cannot reach answers 451 (try later).
Size (MAX_BYTES), command time (COMMAND_TIMEOUT) and processing time are bounded.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import logging
import sqlite3
from typing import Any

from aiosmtpd.controller import Controller
from peewee import PeeweeException

from engine.database.db import database
from engine.database.models import Notification
from engine.delivery.return_path import ReturnPath, recipient_tag, return_path_of
from engine.formats.addresses import suppression_key
from engine.inbound import mail_reports
from engine.inbound.matching import message_ids_of
from engine.reports import events

log = logging.getLogger("herald.bounces")
MAX_RECIPIENTS = 10
COMMAND_TIMEOUT = 60  # seconds a client may take per command
PROCESS_TIMEOUT = 30.0  # seconds to read and record one report


def record_mail(paths: list[ReturnPath | str], raw: bytes) -> int:
    """Record what ``raw`` reports about each notification its VERP address names, for the
    recipient that address was made for only; returns events recorded (a report already
    recorded, the same mail again, records nothing). Raises MalformedReport for mail that
    is no report."""
    report = mail_reports.parse(raw)
    digest = hashlib.sha256(raw).hexdigest()[:40]
    recorded = 0
    database.connect(reuse_if_open=True)
    try:
        for path in paths:
            if isinstance(path, str):
                path = ReturnPath(path, None)
            notification_id = path.notification_id
            notification = Notification.get_or_none(Notification.id == notification_id)
            if notification is None:
                log.info("report for notification %s, which no longer exists: dropped",
                         notification_id)
                continue
            if report.message_ids and not _same_message(notification, report.message_ids):
                log.warning("report for notification %s quotes a message it did not send: "
                            "dropped", notification_id)
                continue
            for reported in _for_its_recipient(notification, path, report.reports):
                key = f"mail:{digest}:{reported.kind}:{reported.recipient or ''}"
                recorded += events.record(notification, dataclasses.replace(
                    reported, dedupe_key=hashlib.sha256(key.encode()).hexdigest()[:40]))
    finally:
        database.close()
    return recorded


def _for_its_recipient(notification: Notification, path: ReturnPath,
                       reports: list[events.Reported]) -> list[events.Reported]:
    """The reports that speak for the recipient the envelope was made for, each naming it.

    A co-recipient sees the envelope sender (Return-Path) of their own copy only, so a
    report about anyone else sent to it is forged: dropped. An address made before
    envelopes were per recipient binds no one: it counts only for a notification with one
    recipient."""
    addressed = events.recipients_of(notification)
    if path.recipient_tag is None:
        bound = next(iter(addressed)) if len(addressed) == 1 else None
    else:
        bound = next((k for k in addressed
                      if recipient_tag(notification.id, k) == path.recipient_tag), None)
    if bound is None:
        log.warning("report for notification %s names no recipient it was made for: "
                    "dropped", notification.id)
        return []
    kept = []
    for reported in reports:
        named = suppression_key(reported.recipient) if reported.recipient else bound
        if named != bound:
            log.warning("a %s report for notification %s names %s, not the recipient its "
                        "envelope was made for: dropped", reported.kind, notification.id, named)
            continue
        kept.append(dataclasses.replace(reported, recipient=bound))
    return kept


def _same_message(notification: Notification, quoted: set[str]) -> bool:
    """Whether the original message a report quotes is one of the notification's (when its
    attempts recorded Message-IDs: a provider's own ids do not compare)."""
    sent = {m for m in message_ids_of(notification) if "@" in m}
    envelope = {m.replace("2B", "+").replace("3D", "=") for m in quoted}
    return not sent or bool(sent & (quoted | envelope))


class BounceHandler:
    """aiosmtpd handler: VERP recipients only; each message read off the event loop."""

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str,
                          rcpt_options: list[str]) -> str:
        if return_path_of(address) is None:
            return "550 5.1.1 No such mailbox"
        if len(envelope.rcpt_tos) >= MAX_RECIPIENTS:
            return "452 4.5.3 Too many recipients"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        paths = [p for a in envelope.rcpt_tos if (p := return_path_of(a)) is not None]
        ids = [p.notification_id for p in paths]
        raw = envelope.original_content or envelope.content or b""
        loop = asyncio.get_running_loop()
        try:
            recorded = await asyncio.wait_for(
                loop.run_in_executor(None, record_mail, paths, raw), PROCESS_TIMEOUT)
        except mail_reports.MalformedReport as err:
            log.warning("dropped a message for %s: %s", ", ".join(ids), err)
            return "250 OK (not a report we read)"
        except (TimeoutError, PeeweeException, sqlite3.Error, OSError):
            log.exception("could not record a report for %s", ", ".join(ids))
            return "451 4.3.0 Try again later"
        except Exception:  # a parser's bug on hostile input: never the listener's end
            log.exception("dropped a message for %s", ", ".join(ids))
            return "250 OK (not a report we read)"
        log.info("report for %s: %d event(s) recorded", ", ".join(ids), recorded)
        return "250 OK"


def start(host: str, port: int) -> Controller:
    """Start listening (on aiosmtpd's own thread); stop with ``.stop()``."""
    controller = Controller(BounceHandler(), hostname=host, port=port,
                            data_size_limit=mail_reports.MAX_BYTES, decode_data=False,
                            ready_timeout=10, enable_SMTPUTF8=True, timeout=COMMAND_TIMEOUT)
    controller.start()
    return controller
