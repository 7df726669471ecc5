"""Postmark's Bounce, SpamComplaint and Delivery webhooks, authenticated by the workspace's
secret as basic auth, over real HTTP."""

from __future__ import annotations

import requests

from engine.database.models import Suppression
from engine.database.models.reports import NotificationEvent
from engine.delivery.jobs import deliver_notification
from engine.inbound import workspace_secrets
from engine.reports.counts import counts
from engine.reports.filters import parse
from tests import factories


def sent(ws, to="ada@example.net"):
    n = factories.notification(ws, factories.email_payload(to=[to]))
    assert deliver_notification(str(n.id)) == "delivered"
    return n


def bounce(message_id, email="ada@example.net", kind="HardBounce", ident=42):
    return {"RecordType": "Bounce", "ID": ident, "Type": kind, "TypeCode": 1,
            "MessageID": message_id, "Email": email, "Description": "Unknown user",
            "Details": "smtp;550 5.1.1 The email account that you tried to reach does not "
                       "exist", "BouncedAt": "2026-11-20T10:00:00.123456Z"}


def post(base, ws_id, body, password=None):
    return requests.post(f"{base}/api/inbound/postmark/{ws_id}", json=body, timeout=10,
                         auth=("herald", password if password is not None
                               else workspace_secrets.secret(ws_id, "postmark")))


def test_a_bounce_webhook_is_recorded_counted_and_suppresses(with_providers, postmark_api):
    ws = factories.workspace()
    n = sent(ws)
    answer = post(with_providers, ws.id, bounce(postmark_api.ids[0]))
    assert answer.status_code == 200 and answer.json() == {"recorded": True}
    event = NotificationEvent.get(NotificationEvent.notification == n.id)
    assert (event.kind, event.recipient, event.source) == ("bounced", "ada@example.net",
                                                           "postmark")
    assert "5.1.1" in event.detail
    assert Suppression.get(Suppression.workspace == ws.id).address == "ada@example.net"
    totals = counts(parse(ws.id, {})).totals
    assert (totals["Bounced"], totals["Delivered"]) == (1, 0)
    again = post(with_providers, ws.id, bounce(postmark_api.ids[0]))  # Postmark retried
    assert again.json() == {"recorded": False}


def test_a_spam_complaint_suppresses_and_a_delivery_is_kept(with_providers, postmark_api):
    ws = factories.workspace()
    n = sent(ws)
    delivery = {"RecordType": "Delivery", "MessageID": postmark_api.ids[0],
                "Recipient": "ada@example.net", "DeliveredAt": "2026-11-20T10:00:00Z",
                "Details": "smtp;250 2.0.0 OK"}
    assert post(with_providers, ws.id, delivery).json() == {"recorded": True}
    complaint = {"RecordType": "SpamComplaint", "ID": 7, "Type": "SpamComplaint",
                 "MessageID": postmark_api.ids[0], "Email": "ada@example.net"}
    assert post(with_providers, ws.id, complaint).json() == {"recorded": True}
    assert sorted(e.kind for e in NotificationEvent.select().where(
        NotificationEvent.notification == n.id)) == ["complained", "delivered"]
    assert Suppression.get(Suppression.workspace == ws.id).reason == "complaint"
    assert counts(parse(ws.id, {})).totals["Complained"] == 1


def test_a_wrong_or_missing_secret_is_refused_and_records_nothing(with_providers, postmark_api):
    ws, other = factories.workspace(), factories.workspace()
    sent(ws)
    body = bounce(postmark_api.ids[0])
    assert post(with_providers, ws.id, body, password="guess").status_code == 403
    # another workspace's own secret does not open this workspace's URL
    theirs = workspace_secrets.secret(other.id, "postmark")
    assert post(with_providers, ws.id, body, password=theirs).status_code == 403
    bare = requests.post(f"{with_providers}/api/inbound/postmark/{ws.id}", json=body,
                         timeout=10)
    assert bare.status_code == 401 and "Basic" in bare.headers["WWW-Authenticate"]
    assert post(with_providers, "not-a-uuid", body, password="guess").status_code == 403
    assert NotificationEvent.select().count() == 0 and Suppression.select().count() == 0


def test_an_event_about_another_workspaces_message_records_nothing(with_providers,
                                                                    postmark_api):
    ws, other = factories.workspace(), factories.workspace()
    sent(ws)
    answer = post(with_providers, other.id, bounce(postmark_api.ids[0]))
    assert answer.status_code == 200 and answer.json() == {"recorded": False}
    unknown = post(with_providers, ws.id, bounce("ffffffff-0000-4000-8000-000000000000"))
    assert unknown.json() == {"recorded": False}
    assert NotificationEvent.select().count() == 0 and Suppression.select().count() == 0


def test_a_report_naming_an_address_the_message_never_went_to_records_nothing(
        with_providers, postmark_api):
    ws = factories.workspace()
    sent(ws)
    answer = post(with_providers, ws.id, bounce(postmark_api.ids[0], email="ceo@example.net"))
    assert answer.json() == {"recorded": False}
    assert Suppression.select().count() == 0


def test_a_body_that_is_no_json_object_is_400(with_providers):
    ws = factories.workspace()
    answer = requests.post(f"{with_providers}/api/inbound/postmark/{ws.id}", data=b"[1",
                           auth=("herald", workspace_secrets.secret(ws.id, "postmark")),
                           timeout=10,
                           headers={"Content-Type": "application/json"})
    assert answer.status_code == 400
