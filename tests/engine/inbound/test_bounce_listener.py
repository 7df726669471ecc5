"""`herald bounces` as run: a real SMTP client hands it DSNs and ARF reports for the VERP
return paths of notifications that really went out over SMTP."""

from __future__ import annotations

import os
import signal
import smtplib
import socket
import subprocess
import sys
import time

import pytest

from engine import runtime
from engine.database.models import DeliveryAttempt, Suppression
from engine.database.models.reports import NotificationEvent
from engine.delivery.jobs import deliver_notification
from engine.delivery.providers import close_all
from engine.delivery.return_path import envelope_sender
from engine.queue.embedded_redis import free_port
from engine.reports.timeline import timeline
from tests import factories
from tests.conftest import TEST_SECRET_KEY
from tests.engine.inbound.reports_mail import arf, dsn
from tests.support.smtp_server import start_smtp

HOST = "bounces.herald.test"


@pytest.fixture
def listener(settings, tmp_path):
    port = free_port()
    env = {**os.environ, "HERALD_ENV": "test", "HERALD_DATABASE_URL": settings.database_url,
           "HERALD_SECRET_KEY": TEST_SECRET_KEY}
    log = (tmp_path / "bounces.log").open("w+")
    proc = subprocess.Popen([sys.executable, "-m", "cli", "bounces", "--host", "127.0.0.1",
                             "--port", str(port)], env=env, stdout=log, stderr=log,
                            start_new_session=True)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, "never listened"
            time.sleep(0.05)
    yield port, proc
    os.killpg(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    log.close()


@pytest.fixture
def over_smtp(settings):
    """The workspace's mail goes out through a real SMTP server (its Message-IDs recorded)."""
    controller, handler = start_smtp(free_port())
    runtime.configure(settings.with_changes(
        email_provider=f"smtp://127.0.0.1:{controller.port}?tls=none&timeout=5",
        return_path_domain=HOST))
    close_all()
    yield handler
    close_all()
    controller.stop()
    runtime.configure(settings)


def sent(ws, to="ada@example.net"):
    n = factories.notification(ws, factories.email_payload(to=[to]))
    assert deliver_notification(str(n.id)) == "delivered"
    attempt = DeliveryAttempt.get(DeliveryAttempt.notification == n.id)
    return n, attempt.provider_message_id


def deliver(port, rcpt, message):
    with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:
        client.sendmail("", [rcpt], message)


def wait_for(query, deadline=20.0):
    end = time.monotonic() + deadline
    while not query():
        assert time.monotonic() < end, "nothing recorded in time"
        time.sleep(0.05)


def test_a_dsn_delivered_to_herald_bounces_is_on_the_timeline_and_suppresses(
        listener, over_smtp):
    port, _ = listener
    ws = factories.workspace()
    n, message_id = sent(ws)
    assert message_id.startswith("<") and "@" in message_id
    return_path = over_smtp.received[0].mail_from  # the VERP address the mail went out with
    assert return_path == envelope_sender(n.id, HOST, "ada@example.net")
    deliver(port, return_path, dsn("ada@example.net", message_id))
    wait_for(lambda: NotificationEvent.select().where(
        NotificationEvent.notification == n.id).exists())
    bounce = [e for e in timeline(ws.id, str(n.id)).entries if e.kind == "bounced"]
    assert [(e.recipient, e.detail["source"]) for e in bounce] == [("ada@example.net", "dsn")]
    assert timeline(ws.id, str(n.id)).status == "bounced"
    assert Suppression.get(Suppression.workspace == ws.id).address == "ada@example.net"
    again = factories.notification(ws, factories.email_payload(to=["ada@example.net"]))
    assert deliver_notification(str(again.id)) == "suppressed"
    assert len(over_smtp.received) == 1  # the next send never left


def test_an_arf_complaint_suppresses(listener, over_smtp):
    port, _ = listener
    ws = factories.workspace()
    n, message_id = sent(ws)
    deliver(port, envelope_sender(n.id, HOST, "ada@example.net"),
            arf("ada@example.net", message_id))
    wait_for(lambda: Suppression.select().where(Suppression.workspace == ws.id).exists())
    assert Suppression.get(Suppression.workspace == ws.id).reason == "complaint"


def test_mail_to_anything_but_a_signed_return_path_is_refused(listener, over_smtp):
    port, _ = listener
    ws = factories.workspace()
    n, message_id = sent(ws)
    forged = envelope_sender(n.id, HOST).replace("-", "-x", 1)[:-len(HOST) - 2] + "a@" + HOST
    for rcpt in ("postmaster@" + HOST, forged):
        with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
            deliver(port, rcpt, dsn("ada@example.net", message_id))
        assert refused.value.recipients[rcpt][0] == 550
    assert NotificationEvent.select().count() == 0


def test_a_malformed_report_is_dropped_and_the_listener_goes_on(listener, over_smtp):
    port, proc = listener
    ws = factories.workspace()
    n, message_id = sent(ws)
    rcpt = envelope_sender(n.id, HOST)
    for junk in (b"Subject: hello\r\n\r\nnot a report", (b"\x00\xff" * 40 + b"\r\n") * 200,
                 b"Content-Type: multipart/report; boundary=x\r\n\r\n--x\r\n"):
        deliver(port, rcpt, junk)  # accepted (250) and dropped: no retries from the sender
    # a report quoting a message this notification never sent is dropped too
    deliver(port, rcpt, dsn("ada@example.net", "<someone-else@example.org>"))
    with pytest.raises((smtplib.SMTPSenderRefused, smtplib.SMTPDataError)) as too_big:
        deliver(port, rcpt, (b"x" * 98 + b"\r\n") * 11000)  # over 1 MiB
    assert too_big.value.smtp_code == 552
    with pytest.raises(smtplib.SMTPDataError):  # a line over SMTP's 1,000: refused
        deliver(port, rcpt, b"y" * 2000)
    assert proc.poll() is None
    deliver(port, rcpt, dsn("ada@example.net", message_id))
    wait_for(lambda: NotificationEvent.select().count() == 1)


def test_a_co_recipient_cannot_bounce_another_and_a_replay_records_nothing(
        listener, over_smtp):
    """Issue 37, finding 3: B sends to the attacker, cc the CEO; the attacker mails a DSN
    for the CEO to the envelope sender of their own copy. It used to suppress the CEO for
    all mail in B, and replaying it recorded a second event."""
    port, _ = listener
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload(
        to=["mallory@example.net"], cc=["ceo@example.net"]))
    assert deliver_notification(str(n.id)) == "delivered"
    (attempt,) = DeliveryAttempt.select().where(DeliveryAttempt.notification == n.id)
    message_id = attempt.provider_message_id
    # One transaction per recipient, each with its own envelope sender.
    by_rcpt = {tuple(m.rcpt_tos): m.mail_from for m in over_smtp.received}
    assert set(by_rcpt) == {("mallory@example.net",), ("ceo@example.net",)}
    mine = by_rcpt[("mallory@example.net",)]
    assert mine != by_rcpt[("ceo@example.net",)]
    assert mine == envelope_sender(n.id, HOST, "mallory@example.net")
    deliver(port, mine, dsn("ceo@example.net", message_id))  # the forgery
    assert NotificationEvent.select().count() == 0
    assert not Suppression.select().where(Suppression.address == "ceo@example.net").exists()
    # The address of before (one per notification) speaks for no one of several.
    deliver(port, envelope_sender(n.id, HOST), dsn("ceo@example.net", message_id))
    assert NotificationEvent.select().count() == 0
    # A report about themselves counts, once: the same mail again records nothing new.
    report = dsn("mallory@example.net", message_id)
    deliver(port, mine, report)
    deliver(port, mine, report)
    events = list(NotificationEvent.select().where(NotificationEvent.notification == n.id))
    assert [(e.kind, e.recipient) for e in events] == [("bounced", "mallory@example.net")]
    assert [s.address for s in Suppression.select()] == ["mallory@example.net"]
