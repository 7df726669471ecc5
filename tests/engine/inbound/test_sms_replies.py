"""SMS replies through Twilio's own events path: an inbound message signed as Twilio signs
it (X-Twilio-Signature) is recorded for the workspace that last sent to the number from
that sender; STOP suppresses the next SMS, START lifts it, HELP is answered with the
workspace's help text in TwiML; the message shows in Reports and reaches the callback URL
signed; a forged or unsigned one counts for nothing."""

from __future__ import annotations

import json

import pytest
import requests

from engine.callbacks import targets
from engine.callbacks.jobs import send_callbacks
from engine.catalog import sms_help
from engine.database.models import Suppression, utcnow
from engine.database.models.callbacks import Callback
from engine.database.models.recipients import InboundMessage
from engine.delivery.jobs import deliver_notification
from engine.reports import filters, inbound
from engine.webhooks.signatures import verify_webhook
from plugins.twilio.events import signature
from tests import factories
from tests.engine.inbound.conftest import SID, TOKEN

ADA, OURS, OTHER = "+14155550123", "+15005550006", "+15005550007"


def sms(ws, number=ADA, sender=OURS) -> str:
    n = factories.notification(ws, {"channel": "sms", "to": [number], "text": "Your code",
                                    "from": sender, "suppressionKeys": [number]})
    return deliver_notification(str(n.id))


def reply(base, text, number=ADA, to=OURS, sid="SM" + "a" * 32, token=TOKEN, signed=True):
    """Twilio's inbound webhook, as Twilio posts it to the number's messaging URL."""
    url = f"{base}/api/inbound/twilio"
    form = {"AccountSid": SID, "MessageSid": sid, "SmsSid": sid, "SmsStatus": "received",
            "From": number, "To": to, "Body": text, "NumMedia": "0", "ApiVersion": "2010-04-01"}
    headers = {"X-Twilio-Signature": signature(token, url, form.items())} if signed else {}
    return requests.post(url, data=form, headers=headers, timeout=10)


@pytest.fixture
def called_back(receiver, ca_file, monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", ca_file)
    ws = factories.workspace()
    targets.set_target(ws, receiver.url("/cb", "localhost"))
    return ws


def test_stop_suppresses_the_next_sms_and_start_lifts_it(with_providers, twilio_api,
                                                         called_back, receiver):
    ws = called_back
    other = factories.workspace()
    assert sms(other) == "delivered"  # an older send from the same number, elsewhere
    assert sms(ws) == "delivered"
    answer = reply(with_providers, " stop ", sid="SM" + "1" * 32)
    assert answer.status_code == 204
    row = Suppression.get()
    assert (row.workspace_id, row.address, row.scope, row.reason) == (ws.id, ADA, "all",
                                                                     "stop")
    assert sms(other) == "delivered", "another workspace's SMS is not stopped"
    sent = len(twilio_api.sids)
    assert sms(ws) == "suppressed"
    assert len(twilio_api.sids) == sent, "the suppressed SMS reached Twilio"
    assert reply(with_providers, "Start", sid="SM" + "2" * 32).status_code == 204
    assert Suppression.select().count() == 0
    assert sms(ws) == "delivered"
    # In Reports under the Inbound filter, and called back signed, in order.
    shown, total = inbound.messages(filters.parse(ws.id, {"inbound": "1"}))
    assert total == 2 and [(m.text, m.keyword) for m in shown] == [("Start", "start"),
                                                                  (" stop ", "stop")]
    send_callbacks(str(ws.id))  # with the workspace's delivery outcomes, in order
    bodies = []
    for request in receiver.received:
        assert verify_webhook(ws.signing_secret, request.body, request.headers)
        bodies.append(json.loads(request.body))
    bodies = [b for b in bodies if b["type"] == "inbound.received"]
    assert [list(b) for b in bodies] == [["type", "from", "to", "text", "receivedAt"]] * 2
    assert [(b["type"], b["from"], b["to"], b["text"]) for b in bodies] == [
        ("inbound.received", ADA, OURS, " stop "), ("inbound.received", ADA, OURS, "Start")]
    assert bodies[0]["receivedAt"].endswith("Z")


def test_help_is_answered_with_the_workspaces_help_text(with_providers, twilio_api):
    ws = factories.workspace()
    assert sms(ws) == "delivered"
    answer = reply(with_providers, "HELP", sid="SM" + "3" * 32)
    assert answer.status_code == 204, "no help text set: recorded, not answered"
    sms_help.set_help_text(ws.id, "Acme alerts <ops@acme.example>. Reply STOP to stop.")
    answer = reply(with_providers, "help", sid="SM" + "4" * 32)
    assert answer.status_code == 200 and answer.headers["Content-Type"].startswith("text/xml")
    assert answer.text == ('<?xml version="1.0" encoding="UTF-8"?><Response><Message>'
                           "Acme alerts &lt;ops@acme.example&gt;. Reply STOP to stop."
                           "</Message></Response>")
    assert Suppression.select().count() == 0
    assert InboundMessage.select().count() == 2


def test_stop_counts_for_the_workspace_that_sent_from_that_number(with_providers,
                                                                    twilio_api):
    ours, theirs = factories.workspace(), factories.workspace()
    assert sms(ours, sender=OURS) == "delivered"
    assert sms(theirs, sender=OTHER) == "delivered"  # later, from another number
    assert reply(with_providers, "STOPALL", to=OURS).status_code == 204
    assert [(r.workspace_id, r.address) for r in Suppression.select()] == [(ours.id, ADA)]


def test_a_forged_unsigned_or_repeated_message_counts_for_nothing(with_providers, twilio_api):
    ws = factories.workspace()
    assert sms(ws) == "delivered"
    assert reply(with_providers, "STOP", token="not-the-token").status_code == 403
    assert reply(with_providers, "STOP", signed=False).status_code == 403
    assert InboundMessage.select().count() == 0 and Suppression.select().count() == 0
    assert sms(ws) == "delivered"
    # Twilio retrying one message: recorded and acted on once.
    assert reply(with_providers, "STOP", sid="SM" + "5" * 32).status_code == 204
    assert reply(with_providers, "START", sid="SM" + "6" * 32).status_code == 204
    assert reply(with_providers, "STOP", sid="SM" + "5" * 32).status_code == 204
    assert Suppression.select().count() == 0
    assert InboundMessage.select().count() == 2


def test_a_message_from_a_number_no_one_sent_to_is_recorded_only(with_providers):
    assert reply(with_providers, "STOP", number="+14155550999").status_code == 204
    (row,) = InboundMessage.select()
    assert row.workspace_id is None and row.keyword == "stop"
    assert Suppression.select().count() == 0 and Callback.select().count() == 0


def test_the_reports_inbound_filter_shows_only_the_workspaces_messages(settings):
    ws, other = factories.workspace(), factories.workspace()
    for workspace, number in ((ws, ADA), (other, "+14155550124")):
        InboundMessage.create(workspace=workspace, provider="twilio", message_id=number,
                              sender=number, recipient=OURS, text="hello",
                              received_at=utcnow())
    shown, total = inbound.messages(filters.parse(ws.id, {"recipient": ADA}))
    assert total == 1 and shown[0].sender == ADA
    assert inbound.messages(filters.parse(ws.id, {"recipient": "+14155550124"}))[1] == 0


def test_the_purge_removes_messages_past_the_workspaces_retention(settings):
    import datetime as dt

    from engine.retention.purge import purge

    ws = factories.workspace(retention_days=30)
    now = utcnow()
    for sid, age in (("SMold", 31), ("SMnew", 1)):
        InboundMessage.create(workspace=ws, provider="twilio", message_id=sid, sender=ADA,
                              recipient=OURS, text="STOP", keyword="stop",
                              received_at=now - dt.timedelta(days=age))
    assert purge(ws.id, now, dry_run=True)["inboundMessages"] == 1
    assert InboundMessage.select().count() == 2
    assert purge(ws.id, now)["inboundMessages"] == 1
    assert [m.message_id for m in InboundMessage.select()] == ["SMnew"]
