"""Suppression scope end to end: sent through the API, delivered to a real aiosmtpd server,
unsubscribed through the real one-click endpoint. An unsubscribe stops Marketing email only;
a hard bounce stops every message (docs/delivery.md, "Suppression scope")."""

from __future__ import annotations

import email
import json
import re
from email import policy

import pytest

from engine.catalog import suppressions
from engine.database.models import Notification, Suppression
from engine.delivery.jobs import deliver_notification
from tests import factories

SEND = "/api/v1/notifications/send"




@pytest.fixture
def streams(settings):
    """A workspace with a Transactional and a Marketing template, and a key."""
    ws = factories.workspace()
    return {"ws": ws, "key": factories.api_key(ws),
            "Transactional": factories.template(ws),
            "Marketing": factories.template(ws, content={"emailType": "Marketing"})}


def _send(client, streams, email_type: str, to: str) -> str:
    """The notification the API accepted, delivered by the worker: its outcome."""
    body = {"tenantId": str(streams["ws"].id), "templateId": str(streams[email_type].id),
            "tags": [{"key": "name", "value": "Ada"}], "emailOptions": {"to": [to]}}
    response = client.post(SEND, data=json.dumps(body), content_type="application/json",
                           headers={"X-Api-Key": streams["key"]})
    assert response.status_code == 202, response.json
    row = Notification.select().order_by(Notification.created_at.desc()).first()
    return deliver_notification(str(row.id))


def _unsubscribe_path(raw: bytes) -> str:
    """The one-click link of a received Marketing message (RFC 8058), as a path."""
    message = email.message_from_bytes(raw, policy=policy.default)
    link = re.fullmatch(r"<(https?://[^>]+)>", str(message["List-Unsubscribe"]).strip()).group(1)
    return re.sub(r"^https?://[^/]+", "", link)


def test_a_marketing_unsubscribe_stops_marketing_mail_but_not_a_password_reset(
        client, smtp, streams):
    assert _send(client, streams, "Marketing", "Ada@Example.net") == "delivered"
    path = _unsubscribe_path(smtp.received[-1].content)
    response = client.post(path, data="List-Unsubscribe=One-Click",
                           content_type="application/x-www-form-urlencoded")
    assert response.status_code == 200 and b"marketing email" in response.data
    row = Suppression.get(Suppression.workspace == streams["ws"])
    assert (row.address, row.reason, row.scope) == ("ada@example.net", "unsubscribe",
                                                    "marketing")
    arrived = len(smtp.received)
    assert _send(client, streams, "Transactional", "ada@example.net") == "delivered"
    assert [m.rcpt_tos for m in smtp.received[arrived:]] == [["ada@example.net"]]
    assert _send(client, streams, "Marketing", "ada@example.net") == "suppressed"
    assert len(smtp.received) == arrived + 1, "the Marketing send reached her"


def test_a_bounce_stops_both_streams_and_widens_an_unsubscribe(client, smtp, streams):
    smtp.refuse["gone@example.net"] = "550 5.1.1 mailbox unavailable"
    assert _send(client, streams, "Transactional", "gone@example.net") == "suppressed"
    assert Suppression.get(Suppression.address == "gone@example.net").scope == "all"
    del smtp.refuse["gone@example.net"]
    for email_type in ("Transactional", "Marketing"):
        assert _send(client, streams, email_type, "gone@example.net") == "suppressed"
    assert smtp.received == []
    # An address unsubscribed from Marketing that then bounces is suppressed for all mail.
    suppressions.add(streams["ws"].id, ["left@example.net"], "unsubscribe")
    smtp.refuse["left@example.net"] = "550 5.1.1 mailbox unavailable"
    assert _send(client, streams, "Transactional", "left@example.net") == "suppressed"
    row = Suppression.get(Suppression.address == "left@example.net")
    assert (row.reason, row.scope) == ("bounce", "all")


def test_an_unsubscribe_never_narrows_a_suppression_of_all_mail(client, smtp, streams):
    suppressions.add(streams["ws"].id, ["ada@example.net"], "complaint")
    n = factories.notification(streams["ws"], factories.email_payload(emailType="Marketing"))
    from engine.delivery.tracking import unsubscribe_url

    path = re.sub(r"^https?://[^/]+", "", unsubscribe_url(str(n.id), "ada@example.net"))
    assert client.post(path).status_code == 200
    row = Suppression.get(Suppression.address == "ada@example.net")
    assert (row.reason, row.scope) == ("complaint", "all")
    assert _send(client, streams, "Transactional", "ada@example.net") == "suppressed"
    assert smtp.received == []
