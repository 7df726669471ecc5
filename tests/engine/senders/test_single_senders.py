"""Single senders: the mailed link, its page (a GET never confirms), 48 hours, resend."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from cli.app import create_app
from engine.database.models import Account, Sender
from engine.database.models.inbox import InboxMessage
from engine.senders.addresses import add_address, confirm, resend
from engine.senders.errors import SenderError

POSTAL = "Acme Ltd\n1 Harbour Road\nPortsmouth PO1 1AA"


@pytest.fixture
def account(settings):
    return Account.create(name="Acme", plan="basic")


@pytest.fixture
def client(settings):
    return create_app(settings).test_client()


def _link(address: str) -> str:
    message = [m for m in InboxMessage.select().order_by(InboxMessage.id) if address in m.to][-1]
    return re.search(r"http://herald\.test(/senders/confirm/\S+)", message.text)[1]


def test_the_link_opens_a_page_whose_button_confirms(account, client):
    sender = add_address(account, "Ops@Acme.example", "Acme Ops", POSTAL)
    assert sender.status == "pending" and sender.verified is False
    message = InboxMessage.get()
    assert message.to == ["ops@acme.example"] and "48 hours" in message.text
    path = _link("ops@acme.example")
    page = client.get(path)
    assert page.status_code == 200 and b"<button>Confirm</button>" in page.data
    assert Sender.get_by_id(sender.id).status == "pending", "a GET never confirms"
    done = client.post(path)
    assert done.status_code == 200 and b"is now a verified sender" in done.data
    assert Sender.get_by_id(sender.id).verified is True
    again = client.post(path)
    assert again.status_code == 404 and b"used already" in again.data


def test_a_link_expires_after_48_hours(account):
    start = dt.datetime(2026, 3, 2, 9, 0)
    add_address(account, "ops@acme.example", "Acme Ops", POSTAL, now=start)
    token = _link("ops@acme.example").rpartition("/")[2]
    with pytest.raises(SenderError, match="expired"):
        confirm(token, now=start + dt.timedelta(hours=48))
    assert confirm(token, now=start + dt.timedelta(hours=47, minutes=59)).verified


def test_resending_voids_the_older_link(account, client):
    sender = add_address(account, "ops@acme.example", "Acme Ops", POSTAL)
    old = _link("ops@acme.example")
    resend(sender)
    new = _link("ops@acme.example")
    assert new != old
    assert client.post(old).status_code == 404
    assert client.post(new).status_code == 200
    with pytest.raises(SenderError, match="not waiting for confirmation"):
        resend(Sender.get_by_id(sender.id))


def test_a_forged_or_malformed_link_confirms_nothing(account, client):
    add_address(account, "ops@acme.example", "Acme Ops", POSTAL)
    for path in ("/senders/confirm/" + "A" * 43, "/senders/confirm/x", "/senders/confirm/%00"):
        assert client.post(path).status_code == 404
    assert Sender.get().status == "pending"


@pytest.mark.parametrize("address, name, postal, field", [
    ("not an address", "Ops", POSTAL, "address"),
    ("ops@acme.example", "", POSTAL, "from_name"),
    ("ops@acme.example", "Ops\r\nBcc: x@evil.example", POSTAL, "from_name"),
    ("ops@acme.example", "Ops", "", "postal_address"),
    ("ops@acme.example", "Ops", "x" * 501, "postal_address"),
])
def test_bad_single_sender_input_names_its_field(account, address, name, postal, field):
    with pytest.raises(SenderError) as caught:
        add_address(account, address, name, postal)
    assert caught.value.field == field
    assert not Sender.select().exists() and not InboxMessage.select().exists()


def test_the_plan_allows_two_single_senders_on_basic(account):
    add_address(account, "a@acme.example", "A", POSTAL)
    add_address(account, "b@acme.example", "B", POSTAL)
    with pytest.raises(SenderError, match="The Basic plan allows 2 single senders"):
        add_address(account, "c@acme.example", "C", POSTAL)


def test_an_address_verified_by_another_account_is_refused(account, client):
    other = Account.create(name="Rival", plan="pro")
    add_address(other, "ops@acme.example", "Ops", POSTAL)
    client.post(_link("ops@acme.example"))
    with pytest.raises(SenderError) as caught:
        add_address(account, "OPS@acme.example", "Ops", POSTAL)
    assert "another account" in str(caught.value) and "Rival" not in str(caught.value)
