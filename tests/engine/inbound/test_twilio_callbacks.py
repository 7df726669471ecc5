"""Twilio status callbacks: signed as Twilio signs them, matched by MessageSid, recorded."""

from __future__ import annotations

import requests

from engine.database.models import Suppression
from engine.database.models.reports import NotificationEvent
from engine.delivery.jobs import deliver_notification
from engine.reports.timeline import timeline
from plugins.twilio.events import signature
from tests import factories
from tests.engine.inbound.conftest import SID, TOKEN


def sms(ws, number="+14155550123"):
    n = factories.notification(ws, {"channel": "sms", "to": [number], "text": "hi",
                                    "from": "+15005550006", "suppressionKeys": [number]})
    assert deliver_notification(str(n.id)) == "delivered"
    return n


def callback(base, form, token=TOKEN, url=None):
    url = url or f"{base}/api/inbound/twilio"
    signed = signature(token, url, form.items())
    return requests.post(url, data=form, headers={"X-Twilio-Signature": signed}, timeout=10)


def failure(sid, number="+14155550123", code="30005"):
    return {"AccountSid": SID, "MessageSid": sid, "MessageStatus": "undelivered",
            "To": number, "From": "+15005550006", "ErrorCode": code}


def test_a_signed_failure_callback_is_on_the_timeline_and_suppresses_the_number(
        with_providers, twilio_api):
    ws = factories.workspace()
    n = sms(ws)
    sid, = twilio_api.sids
    assert callback(with_providers, failure(sid)).status_code == 204
    entries = timeline(ws.id, str(n.id)).entries
    assert [(e.kind, e.recipient) for e in entries if e.kind == "bounced"] == [
        ("bounced", "+14155550123")]
    assert Suppression.get(Suppression.workspace == ws.id).reason == "bounce"
    later = factories.notification(ws, {"channel": "sms", "to": ["+14155550123"], "text": "x",
                                        "suppressionKeys": ["+14155550123"]})
    assert deliver_notification(str(later.id)) == "suppressed"
    assert len(twilio_api.sids) == 1  # the second never reached Twilio


def test_each_message_asks_twilio_for_callbacks_at_herald(with_providers, twilio_api):
    sms(factories.workspace())
    (_, _, body), = twilio_api.requests
    assert f"StatusCallback={requests.utils.quote(with_providers, safe='')}" in body.decode()


def test_a_forged_or_unsigned_callback_is_403_and_records_nothing(with_providers, twilio_api):
    ws = factories.workspace()
    sms(ws)
    sid, = twilio_api.sids
    assert callback(with_providers, failure(sid), token="not-the-token").status_code == 403
    unsigned = requests.post(f"{with_providers}/api/inbound/twilio", data=failure(sid),
                             timeout=10)
    assert unsigned.status_code == 403
    assert unsigned.headers["Content-Type"] == "application/problem+json"
    other_account = {**failure(sid), "AccountSid": "AC" + "1" * 32}
    assert callback(with_providers, other_account).status_code == 403
    assert NotificationEvent.select().count() == 0
    assert Suppression.select().count() == 0


def test_a_callback_for_an_unknown_message_records_nothing(with_providers):
    assert callback(with_providers, failure("SM" + "9" * 32)).status_code == 204
    assert NotificationEvent.select().count() == 0


def test_a_soft_failure_is_recorded_without_suppressing_and_delivered_is_kept(
        with_providers, twilio_api):
    ws = factories.workspace()
    n = sms(ws)
    sid, = twilio_api.sids
    assert callback(with_providers, failure(sid, code="30008")).status_code == 204
    delivered = {"AccountSid": SID, "MessageSid": sid, "MessageStatus": "delivered",
                 "To": "+14155550123"}
    assert callback(with_providers, delivered).status_code == 204
    assert callback(with_providers, delivered).status_code == 204  # retried: once
    kinds = sorted(e.kind for e in NotificationEvent.select().where(
        NotificationEvent.notification == n.id))
    assert kinds == ["delivered", "soft_bounced"]
    assert Suppression.select().count() == 0
