"""A message whose build or send raises something other than a DeliveryError, through the
job into a real SMTP server: that message fails for good, recorded, and no other message
is sent twice, not by a retry, not by the reconciler."""

from __future__ import annotations

import datetime as dt
import logging

import pytest

from engine import runtime
from engine.database.models import DeliveryAttempt, Notification, utcnow
from engine.delivery import providers
from engine.delivery.jobs import deliver_notification
from engine.worker.reconciler import reconcile
from tests import factories

# A quoted local part with a line break: the SMTP provider raises ValueError on its RCPT.
UNSENDABLE = 'Bob <"bo\nb"@example.net>'


@pytest.fixture(params=[1, 3], ids=["one lane", "three lanes"])
def lanes(request, settings, smtp):
    runtime.configure(settings.with_changes(
        email_provider=f"smtp://127.0.0.1:{smtp.port}?tls=none&connections={request.param}"))
    providers.close_all()
    yield request.param
    providers.close_all()
    runtime.configure(settings)


def _past_grace(notification: Notification) -> None:
    """As the reconciler finds the row a minute on: older than its grace period."""
    Notification.update(updated_at=utcnow() - dt.timedelta(minutes=5)).where(
        Notification.id == notification.id).execute()


def _arrived(smtp) -> list[str]:
    return sorted(a.rcpt_tos[0] for a in smtp.received)


def test_a_fan_out_message_that_raises_fails_alone_and_nobody_gets_a_second_copy(lanes, smtp):
    smtp.refuse["busy@example.net"] = "451 4.3.0 try later"
    recipients = ["victim@example.org", UNSENDABLE, "busy@example.net", "carol@example.net",
                  "dan@example.net"]
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload(emailType="Marketing",
                                                           to=recipients))
    nid = str(n.id)
    assert deliver_notification(nid) == "queued"  # the 451 waits for a retry
    assert _arrived(smtp) == ["carol@example.net", "dan@example.net", "victim@example.org"]
    rows = {a.recipient: a for a in DeliveryAttempt.select()}
    failed = rows['"bo\nb"@example.net']
    assert failed.outcome == "permanent" and failed.number == 1
    assert failed.error.startswith("ValueError: SMTP command contains a line break")
    assert rows["busy@example.net"].outcome == "transient"

    # The retry goes to the deferred recipient alone, not again to the one that failed.
    del smtp.refuse["busy@example.net"]
    Notification.update(next_attempt_at=utcnow()).where(Notification.id == n.id).execute()
    assert deliver_notification(nid) == "delivered"
    _past_grace(n)
    assert not any(reconcile().values())
    assert deliver_notification(nid) == "skipped"  # a job enqueued twice
    assert _arrived(smtp) == ["busy@example.net", "carol@example.net", "dan@example.net",
                              "victim@example.org"]
    n = Notification.get_by_id(n.id)
    assert (n.status, n.attempts, n.last_error) == ("delivered", 2, None)
    tried = [a.recipient for a in DeliveryAttempt.select().where(DeliveryAttempt.number == 2)]
    assert tried == ["busy@example.net"]


def test_a_fan_out_whose_messages_all_raise_fails_once(lanes, smtp):
    """An attachment no channel can decode (a payload the API would refuse, from an older
    release or a plugin): every message raises binascii.Error as the channel builds it."""
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload(
        emailType="Marketing", to=["victim@example.org", "carol@example.net"],
        attachments=[{"name": "a.pdf", "contentType": "application/pdf", "content": "abc",
                      "cid": None}]))
    assert deliver_notification(str(n.id)) == "failed"
    _past_grace(n)
    assert not any(reconcile().values())
    assert deliver_notification(str(n.id)) == "skipped"
    assert smtp.received == []
    n = Notification.get_by_id(n.id)
    assert (n.status, n.attempts) == ("failed", 1)
    rows = list(DeliveryAttempt.select().order_by(DeliveryAttempt.recipient))
    assert [(a.recipient, a.outcome) for a in rows] == [
        ("carol@example.net", "permanent"), ("victim@example.org", "permanent")]
    assert all(a.error.startswith("Error: Incorrect padding") for a in rows)


def test_a_transactional_message_that_raises_fails_the_notification_once(lanes, smtp, caplog):
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload(to=[UNSENDABLE]))
    with caplog.at_level(logging.ERROR, logger="herald.delivery"):
        assert deliver_notification(str(n.id)) == "failed"
    assert f"notification {n.id}: 1 of its messages raised" in caplog.text
    assert "ValueError: SMTP command contains a line break" in caplog.text  # the traceback
    _past_grace(n)
    assert not any(reconcile().values())
    n = Notification.get_by_id(n.id)
    assert (n.status, n.attempts) == ("failed", 1)
    assert n.last_error.startswith("ValueError: SMTP command contains a line break")
    assert smtp.received == []


def test_a_refusal_whose_text_holds_a_nul_is_recorded(lanes, smtp):
    """PostgreSQL refuses a NUL in text: the outcome is recorded with it replaced."""
    smtp.refuse["gone@example.net"] = "554 5.7.1 no\x00thanks"
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload(to=["gone@example.net"]))
    assert deliver_notification(str(n.id)) == "failed"
    n = Notification.get_by_id(n.id)
    assert n.status == "failed" and "\x00" not in n.last_error and "thanks" in n.last_error
