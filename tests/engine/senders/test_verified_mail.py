"""What the worker adds to mail from a verified sender: postal footer, return path, nothing
for a workspace's own provider; and the one model `apply` and the flow share."""

from __future__ import annotations

import email
import json
import re
from email import policy

import pytest

from cli.app import create_app
from engine.catalog import snapshots
from engine.database.models import Sender
from engine.database.models.inbox import InboxMessage
from engine.delivery import providers
from engine.delivery.jobs import deliver_notification
from engine.delivery.return_path import notification_of
from engine.provisioning import apply_document
from engine.queue.embedded_redis import free_port
from engine.senders.accounts import remove
from engine.senders.addresses import add_address, confirm
from engine.senders.domains import add_domain
from engine.senders.errors import SenderError
from tests import factories
from tests.support.smtp_server import start_smtp

POSTAL = "Acme Ltd\n1 Harbour Road"


@pytest.fixture
def smtp(sender_settings, monkeypatch):
    controller, handler = start_smtp(free_port())
    handler.port = controller.port
    monkeypatch.setattr("engine.runtime._settings", sender_settings.with_changes(
        email_provider=f"smtp://127.0.0.1:{controller.port}?tls=none&timeout=5"))
    yield handler
    providers.close_all()
    controller.stop()


def _confirmed(account, address):
    add_address(account, address, "Acme Ops", POSTAL)
    token = re.search(r"/senders/confirm/(\S+)", InboxMessage.select().order_by(
        InboxMessage.id.desc()).first().text)[1]
    return confirm(token)


def test_marketing_mail_from_a_single_sender_carries_its_postal_footer(sender_settings, smtp,
                                                                       monkeypatch):
    ws = factories.workspace()
    monkeypatch.setattr("engine.runtime._settings", sender_settings)  # the inbox for the link
    _confirmed(ws.account, "ops@other.example")
    monkeypatch.setattr("engine.runtime._settings", sender_settings.with_changes(
        email_provider=f"smtp://127.0.0.1:{smtp.port}?tls=none&timeout=5"))
    payload = factories.email_payload(emailType="Marketing", text=None,
                                      **{"from": {"address": "Ops@Other.example",
                                                  "name": "Acme"}})
    n = factories.notification(ws, payload)
    assert deliver_notification(str(n.id)) == "delivered"
    arrived = smtp.received[-1]
    parsed = email.message_from_bytes(arrived.content, policy=policy.default)
    html = parsed.get_body(("html",)).get_content()
    text = parsed.get_body(("plain",)).get_content()
    assert "Acme Ops, Acme Ltd, 1 Harbour Road</p></body>" in html
    assert "Acme Ltd, 1 Harbour Road" in text
    assert "DKIM-Signature" not in parsed, "a single sender's mail has no key of ours"
    # Not a verified domain: the envelope is at the operator's return-path domain.
    assert arrived.mail_from.endswith("@rp.herald.test")
    assert notification_of(arrived.mail_from) == str(n.id)



def test_transactional_mail_has_no_footer(sender_settings, smtp, monkeypatch):
    ws = factories.workspace()
    monkeypatch.setattr("engine.runtime._settings", sender_settings)
    _confirmed(ws.account, "ops@other.example")
    monkeypatch.setattr("engine.runtime._settings", sender_settings.with_changes(
        email_provider=f"smtp://127.0.0.1:{smtp.port}?tls=none&timeout=5"))
    n = factories.notification(ws, factories.email_payload(
        **{"from": {"address": "ops@other.example", "name": "Acme"}}))
    assert deliver_notification(str(n.id)) == "delivered"
    assert b"Harbour Road" not in smtp.received[-1].content


def test_a_workspace_with_its_own_provider_gets_neither_envelope_nor_signature(
        sender_settings, smtp):
    controller, own = start_smtp(free_port())
    try:
        url = f"smtp://127.0.0.1:{controller.port}?tls=none&timeout=5"
        ws = factories.workspace(email_provider=json.dumps({"plugin": "smtp", "url": url}))
        n = factories.notification(ws, factories.email_payload())
        assert deliver_notification(str(n.id)) == "delivered"
        assert own.received[-1].mail_from == "hello@example.com"
        assert b"DKIM-Signature" not in own.received[-1].content
    finally:
        providers.close_all()
        controller.stop()


def test_apply_and_the_flow_share_one_model_in_either_idn_form(sender_settings):
    doc = {"accounts": [{"name": "Acme", "plan": "pro", "monthlyLimit": 1000,
                         "senders": {"domains": ["Bücher.example"],
                                     "addresses": ["ops@Straße.example"]},
                         "workspaces": [{"name": "Production"}]}]}
    apply_document(doc)
    rows = {(s.kind, s.value, s.status, s.declared) for s in Sender.select()}
    assert rows == {("domain", "xn--bcher-kva.example", "verified", True),
                    ("address", "ops@xn--strae-oqa.example", "verified", True)}
    assert apply_document(doc).as_json()["changed"] is False
    ws = factories.Workspace.get()
    tpl = factories.template(ws, defaults={"to": ["ada@example.net"]},
                             content={"fromAddress": "news@xn--bcher-kva.example"})
    key = factories.api_key(ws)
    client = create_app(sender_settings).test_client()
    for address in ("news@bücher.example", "news@xn--bcher-kva.example",
                    "ops@straße.example"):
        body = {"tenantId": str(ws.id), "templateId": str(tpl.id), "tags": [],
                "emailOptions": {"fromAddress": address}}
        sent = client.post("/api/v1/notifications/send", json=body, headers={"X-Api-Key": key})
        assert sent.status_code == 202, (address, sent.json)


def test_apply_verifies_a_request_of_the_flow(sender_settings):
    account = factories.account(name="Acme", plan="pro")
    pending = add_domain(account, "acme.example")
    apply_document({"accounts": [{"name": "Acme", "plan": "pro",
                                  "senders": {"domains": ["acme.example"]}}]})
    row = Sender.get_by_id(pending.id)
    assert (row.status, row.verified, row.declared) == ("verified", True, True)
    assert row.records, "its records stay issued, for its DKIM key"


def test_removing_a_sender_live_templates_use_asks_first_and_names_them(sender_settings):
    ws = factories.workspace()
    tpl = factories.template(ws)  # from hello@example.com, the account's declared domain
    factories.Template.update(name="Welcome").where(factories.Template.id == tpl.id).execute()
    sender = Sender.get(Sender.value == "example.com")
    with pytest.raises(SenderError) as caught:
        remove(sender)
    assert f"Welcome ({ws.name})" in str(caught.value)
    assert Sender.select().where(Sender.id == sender.id).exists()
    assert remove(sender, confirmed=True) == [f"Welcome ({ws.name})"]
    assert not Sender.select().where(Sender.id == sender.id).exists()
    snapshots.clear()
