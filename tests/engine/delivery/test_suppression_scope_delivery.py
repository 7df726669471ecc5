"""The worker's suppression check by stream, against the dev inbox: the claim's pre-read
and the list asked again (a row queued before its keys were listed) agree."""

from __future__ import annotations

import pytest

from engine.catalog import suppressions
from engine.database.models.inbox import InboxMessage
from engine.delivery.jobs import deliver_notification
from tests import factories


def _payload(listed: bool, **fields):
    """As the API writes it (the keys listed, checked by the claim) or as an older row."""
    payload = factories.email_payload(**fields)
    if not listed:
        del payload["suppressionKeys"]
    return payload


@pytest.mark.parametrize("listed", [True, False], ids=["keys-in-payload", "older-payload"])
def test_each_stream_skips_the_scopes_it_should(settings, listed):
    ws = factories.workspace()
    suppressions.add(ws.id, ["left@example.net"], "unsubscribe")  # Marketing only
    suppressions.add(ws.id, ["gone@example.net"], "bounce")  # all mail
    everyone = ["left@example.net", "gone@example.net", "ok@example.net"]
    reset = factories.notification(ws, _payload(listed, to=everyone))
    assert deliver_notification(str(reset.id)) == "delivered"
    (message,) = InboxMessage.select()
    assert sorted(message.to) == ["left@example.net", "ok@example.net"]
    news = factories.notification(ws, _payload(listed, to=everyone, emailType="Marketing"))
    assert deliver_notification(str(news.id)) == "delivered"
    arrived = [m.to for m in InboxMessage.select() if m.notification_id == str(news.id)]
    assert arrived == [["ok@example.net"]]


def test_sms_is_stopped_by_a_suppression_of_all_mail_only(settings):
    # SMS has no Marketing stream: only an `all` row stops it (every number's row is one,
    # since only a Marketing email's link writes `marketing`; an imported one would not).
    ws = factories.workspace()
    suppressions.add(ws.id, ["+14155550100"], "bounce")
    suppressions.add(ws.id, ["+14155550101"], "manual", "marketing")
    n = factories.notification(ws, {"channel": "sms", "from": "+15005550006",
                                    "to": ["+14155550100", "+14155550101"], "text": "Code 1",
                                    "suppressionKeys": ["+14155550100", "+14155550101"]})
    assert deliver_notification(str(n.id)) == "delivered"
    assert [m.to for m in InboxMessage.select()] == [["+14155550101"]]
