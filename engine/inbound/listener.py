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
import logging
import sqlite3
from typing import Any

from aiosmtpd.controller import Controller
from peewee import PeeweeException

from engine.delivery.return_path import notification_of
from engine.inbound import mail_reports
from engine.inbound.matching import message_ids_of
from engine.reports import events
from engine.store.db import database
from engine.store.models import Notification

log = logging.getLogger("herald.bounces")
MAX_RECIPIENTS = 10
COMMAND_TIMEOUT = 60  # seconds a client may take per command
PROCESS_TIMEOUT = 30.0  # seconds to read and record one report


def record_mail(notification_ids: list[str], raw: bytes) -> int:
    """Record what ``raw`` reports about each notification; returns events recorded.
    Raises MalformedReport for mail that is no report."""
    report = mail_reports.parse(raw)
    recorded = 0
    database.connect(reuse_if_open=True)
    try:
        for notification_id in notification_ids:
            notification = Notification.get_or_none(Notification.id == notification_id)
            if notification is None:
                log.info("report for notification %s, which no longer exists: dropped",
                         notification_id)
                continue
            if report.message_ids and not _same_message(notification, report.message_ids):
                log.warning("report for notification %s quotes a message it did not send: "
                            "dropped", notification_id)
                continue
            recorded += sum(events.record(notification, r) for r in report.reports)
    finally:
        database.close()
    return recorded


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
        notification_id = notification_of(address)
        if notification_id is None:
            return "550 5.1.1 No such mailbox"
        if len(envelope.rcpt_tos) >= MAX_RECIPIENTS:
            return "452 4.5.3 Too many recipients"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        ids = [i for a in envelope.rcpt_tos if (i := notification_of(a)) is not None]
        raw = envelope.original_content or envelope.content or b""
        loop = asyncio.get_running_loop()
        try:
            recorded = await asyncio.wait_for(
                loop.run_in_executor(None, record_mail, ids, raw), PROCESS_TIMEOUT)
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
