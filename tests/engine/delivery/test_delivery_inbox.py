"""The job against the dev inbox: statuses, attempts, suppression, fan-out, tracking."""

from __future__ import annotations

import email
from email import policy

import pytest

from engine.database.models import DeliveryAttempt, Notification, Suppression
from engine.database.models.inbox import InboxMessage
from engine.delivery.jobs import deliver_notification
from tests import factories


def test_transactional_email_is_stored_in_the_inbox_and_marked_delivered(settings):
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload(cc=["Bob <bob@example.net>"],
                                                           bcc=["audit@example.net"]))
    assert deliver_notification(str(n.id)) == "delivered"
    n = Notification.get_by_id(n.id)
    assert n.status == "delivered" and n.attempts == 1
    stored = InboxMessage.get()
    assert stored.notification_id == str(n.id)
    assert stored.subject == "Hello Ada"
    parsed = email.message_from_string(stored.raw, policy=policy.default)
    assert parsed["To"] == "ada@example.net"
    assert "bob@example.net" in parsed["Cc"]
    assert parsed["Bcc"] is None, "Bcc must only be in the envelope"
    attempts = list(DeliveryAttempt.select())
    assert [a.outcome for a in attempts] == ["delivered"]


def test_running_the_job_twice_sends_once(settings):
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload())
    assert deliver_notification(str(n.id)) == "delivered"
    assert deliver_notification(str(n.id)) == "skipped"
    assert InboxMessage.select().count() == 1


def _payload(listed: bool, **fields):
    """As the API writes it (the keys listed, checked by the claim) or as an older row."""
    payload = factories.email_payload(**fields)
    if not listed:
        del payload["suppressionKeys"]
    return payload


@pytest.mark.parametrize("listed", [True, False], ids=["keys-in-payload", "older-payload"])
def test_suppressed_recipients_are_removed_at_delivery(settings, listed):
    ws = factories.workspace()
    other = factories.workspace()
    Suppression.create(workspace=ws, address="ada@example.net")
    Suppression.create(workspace=other, address="eve@example.net")  # another tenant's list
    n = factories.notification(ws, _payload(listed, cc=["Zed <ZED@example.net>"]))
    Suppression.create(workspace=ws, address="zed@example.net")  # after the send
    assert deliver_notification(str(n.id)) == "suppressed"
    assert InboxMessage.select().count() == 0
    n2 = factories.notification(ws, _payload(listed, to=["ada@example.net",
                                                         "eve@example.net"]))
    assert deliver_notification(str(n2.id)) == "delivered"
    assert InboxMessage.get().to == ["eve@example.net"]


def test_marketing_sends_one_message_per_recipient_with_one_click_unsubscribe(settings):
    ws = factories.workspace()
    payload = factories.email_payload(emailType="Marketing",
                                      to=["a@example.net", "b@example.net"],
                                      cc=["c@example.net"], trackOpens=True, trackClicks=True,
                                      html="<html><body><a href=\"https://example.org/x?a=1&amp;b=2\">x</a>"
                                           "</body></html>")
    n = factories.notification(ws, payload)
    assert deliver_notification(str(n.id)) == "delivered"
    stored = list(InboxMessage.select().order_by(InboxMessage.id))
    assert [m.to for m in stored] == [["a@example.net"], ["b@example.net"], ["c@example.net"]]
    for message in stored:
        assert message.cc == [] and message.bcc == []
        headers = email.message_from_string(message.raw, policy=policy.default)
        assert headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        assert headers["List-Unsubscribe"].startswith("<http://herald.test/t/u/")
        assert "http://herald.test/t/o/" in message.html
        assert "http://herald.test/t/c/" in message.html
        assert "https://example.org/x" not in message.html
    assert DeliveryAttempt.select().count() == 3


def test_sms_goes_to_the_inbox(settings):
    ws = factories.workspace()
    n = factories.notification(ws, {"channel": "sms", "from": "+15005550006",
                                    "to": ["+14155550100"], "text": "Code 1234"})
    assert deliver_notification(str(n.id)) == "delivered"
    stored = InboxMessage.get()
    assert (stored.channel, stored.to, stored.text) == ("sms", ["+14155550100"], "Code 1234")
