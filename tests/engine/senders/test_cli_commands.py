"""`herald senders ...` and `herald dkim records` in a real process: the shapes of issue 26."""

from __future__ import annotations

import re

from engine.database.models import Account, Sender
from engine.database.models.inbox import InboxMessage
from tests import factories


def test_add_domain_prints_the_issued_records_in_the_contract_shape(senders_cli):
    Account.create(name="Acme", plan="pro")
    doc = senders_cli("senders", "add-domain", "bücher.example", "--account", "Acme")
    assert set(doc) == {"domain", "status", "expiresAt", "records"}
    assert doc["domain"] == "xn--bcher-kva.example" and doc["status"] == "pending"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", doc["expiresAt"])
    assert [set(r) for r in doc["records"]] == [
        {"purpose", "type", "host", "value", "status", "reason"}] * 4
    assert [r["purpose"] for r in doc["records"]] == ["dkim", "dkim", "return-path", "dmarc"]
    published = senders_cli("dkim", "records")
    assert [r["host"] for r in published] == [r["value"] for r in doc["records"][:2]]
    assert all(set(r) == {"host", "type", "value"} for r in published)


def test_single_senders_list_and_remove(senders_cli):
    account = factories.account(name="Acme", plan="basic")  # declares example.com
    added = senders_cli("senders", "add-address", "ops@other.example", "--account", "Acme",
                        "--from-name", "Acme Ops", "--postal-address", "1 Harbour Road")
    assert added["status"] == "pending" and added["name"] == "ops@other.example"
    assert InboxMessage.get().to == ["ops@other.example"]
    again = senders_cli("senders", "resend", "ops@other.example", "--account", "Acme")
    assert again["linkExpiresAt"] and InboxMessage.select().count() == 2
    assert senders_cli("senders", "list", "--account", str(account.id)) == [
        {"kind": "domain", "name": "example.com", "status": "verified"},
        {"kind": "address", "name": "ops@other.example", "status": "pending"}]
    ws = factories.workspace(account)
    factories.template(ws)  # from hello@example.com
    refused = senders_cli("senders", "remove", "example.com", "--account", "Acme", ok=False)
    assert refused.returncode == 1 and "live templates" in refused.stderr
    assert Sender.select().where(Sender.value == "example.com").exists()
    removed = senders_cli("senders", "remove", "example.com", "--account", "Acme", "--yes")
    assert removed["removed"] is True and len(removed["liveTemplates"]) == 1
    assert not Sender.select().where(Sender.value == "example.com").exists()


def test_adding_a_domain_without_the_operator_zones_says_which_settings(senders_cli):
    Account.create(name="Acme", plan="pro")
    proc = senders_cli("senders", "add-domain", "acme.example", "--account", "Acme", ok=False,
                       without=("HERALD_DKIM_ZONE",))
    assert proc.returncode == 1
    assert "HERALD_DKIM_ZONE and HERALD_RETURN_PATH_DOMAIN" in proc.stderr
