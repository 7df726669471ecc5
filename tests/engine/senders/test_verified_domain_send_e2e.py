"""Issue 26's "Done when": a domain added and checked by the CLI against records a DNS
server serves; a send from it that was 422 is 202 after the check; the mail the worker
sends arrives DKIM-signed, verifying through the customer's CNAMEs, from the return path."""

from __future__ import annotations

import email
import re

import dkim
import dns.resolver
import pytest

from cli.app import create_app
from engine.catalog import snapshots
from engine.database.models import Account, Notification
from engine.delivery import providers
from engine.delivery.jobs import deliver_notification
from engine.delivery.return_path import notification_of
from engine.queue.embedded_redis import free_port
from tests import factories
from tests.support.smtp_server import start_smtp

SEND = "/api/v1/notifications/send"


@pytest.fixture
def smtp():
    controller, handler = start_smtp(free_port())
    handler.port = controller.port
    yield handler
    controller.stop()


def _dns_for(zone):
    """What a receiving mail server does: ask DNS for the TXT record, following CNAMEs."""
    resolver = dns.resolver.Resolver(configure=False)
    resolver.nameservers = ["127.0.0.1"]
    resolver.port = zone.port

    def txt(name: bytes, timeout: int = 5) -> bytes | None:
        try:
            answer = resolver.resolve(name.decode().rstrip("."), "TXT", lifetime=timeout)
        except dns.exception.DNSException:
            return None
        return b"".join(answer[0].strings)

    return txt


def test_a_domain_checked_by_the_cli_sends_dkim_signed_mail_that_verifies(
        sender_settings, zone, senders_cli, smtp, monkeypatch):
    account = factories.account(name="Acme")
    ws = factories.workspace(account)
    tpl = factories.template(ws, defaults={"to": ["ada@example.net"]},
                             content={"fromAddress": "hello@acme.example", "fromName": "Acme"})
    key = factories.api_key(ws)
    body = {"tenantId": str(ws.id), "templateId": str(tpl.id), "tags": []}
    client = create_app(sender_settings).test_client()

    refused = client.post(SEND, json=body, headers={"X-Api-Key": key})
    assert refused.status_code == 422 and refused.json["errorCode"] == "sender.not_verified"

    added = senders_cli("senders", "add-domain", "acme.example", "--account", "Acme")
    assert added["status"] == "pending"
    for record in added["records"]:
        zone.add(record["host"], record["type"], record["value"])
    for record in senders_cli("dkim", "records"):
        assert record["type"] == "TXT" and record["value"].startswith("v=DKIM1; k=rsa; p=")
        zone.add(record["host"], "TXT", record["value"])
    checked = senders_cli("senders", "check", "acme.example", "--account", str(account.id))
    assert checked["status"] == "verified"
    assert {r["status"] for r in checked["records"]} == {"verified"}
    listed = senders_cli("senders", "list", "--account", "Acme")
    assert {"kind": "domain", "name": "acme.example", "status": "verified"} in listed

    snapshots.clear()  # what the snapshot's 5 seconds would do
    accepted = client.post(SEND, json=body, headers={"X-Api-Key": key})
    assert accepted.status_code == 202, accepted.json

    monkeypatch.setattr("engine.runtime._settings", sender_settings.with_changes(
        email_provider=f"smtp://127.0.0.1:{smtp.port}?tls=none&timeout=5"))
    try:
        notification = Notification.get()
        assert deliver_notification(str(notification.id)) == "delivered"
    finally:
        providers.close_all()
    arrived = smtp.received[-1]
    assert notification_of(arrived.mail_from) == str(notification.id)
    assert arrived.mail_from.endswith("@hrp.acme.example")
    message = email.message_from_bytes(arrived.content)
    signature = message["DKIM-Signature"]
    assert "d=acme.example" in signature and "s=hd1" in signature
    assert "c=relaxed/relaxed" in signature
    assert re.search(r"h=[^;]*from", signature, re.IGNORECASE)
    assert dkim.verify(arrived.content, dnsfunc=_dns_for(zone))
    tampered = arrived.content.replace(b"Subject: Hi", b"Subject: Ho")
    assert tampered != arrived.content and not dkim.verify(tampered, dnsfunc=_dns_for(zone))


def test_a_refused_cli_command_is_one_line_on_stderr(sender_settings, senders_cli):
    Account.create(name="Acme", plan="basic")
    for args, words in ((("senders", "add-domain", "192.0.2.1", "--account", "Acme"),
                         "An IP address is not a domain"),
                        (("senders", "add-domain", "acme.example", "--account", "Nobody"),
                         "no account Nobody"),
                        (("senders", "check", "acme.example", "--account", "Acme"),
                         "not a sender domain of this account")):
        proc = senders_cli(*args, ok=False)
        assert proc.returncode == 1 and proc.stdout == ""
        assert proc.stderr.count("\n") == 1 and words in proc.stderr, proc.stderr
