"""The Senders page (docs/web.md, docs/senders.md) in Chromium: add a domain, publish its
records, Check now, the send that was 422 is 202; bad input marked on its field; single
senders by their link; removal names the live templates; Owners and Admins only."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from engine import runtime
from engine.catalog import snapshots
from engine.database.models import Sender
from engine.database.models.inbox import InboxMessage
from engine.senders import identity
from tests import factories
from tests.web.conftest import make_user, sign_in

SEND = "/api/v1/notifications/send"


@pytest.fixture
def zoned(live, zone, monkeypatch):
    """The live server's engine asking ``zone`` for every DNS lookup."""
    monkeypatch.setattr(runtime, "_settings", live.settings.with_changes(
        dns_nameservers=(zone.nameserver,), dkim_zone="dkim.herald.test",
        return_path_domain="rp.herald.test"))
    identity.clear()
    return live


def _owner(page: Page, role: str = "owner"):
    account = factories.account(name="Acme")
    ws = factories.workspace(account)
    make_user("ada@example.com", ws, role, "Ada")
    sign_in(page, "ada@example.com")
    page.goto(f"/w/{ws.id}/settings")
    if role != "member":
        page.get_by_role("link", name="Senders").click()
    return ws


def test_a_domain_added_and_checked_in_the_page_turns_a_422_into_a_202(page: Page, zoned,
                                                                        zone):
    ws = _owner(page)
    tpl = factories.template(ws, defaults={"to": ["ada@example.net"]},
                             content={"fromAddress": "hello@acme.example"})
    key = factories.api_key(ws)
    body = {"tenantId": str(ws.id), "templateId": str(tpl.id), "tags": []}
    api = page.request
    assert api.post(SEND, data=body, headers={"X-Api-Key": key}).status == 422

    page.get_by_role("textbox", name="Domain").fill("Acme.Example")
    page.get_by_role("button", name="Add domain").click()
    expect(page.get_by_role("heading", name="acme.example Pending")).to_be_visible()
    table = page.get_by_role("table", name="DNS records of acme.example")
    rows = table.get_by_role("row")
    expect(rows).to_have_count(5)  # the header and four records
    for host, value in _records(page):
        zone.add(host, "TXT" if host.startswith("_dmarc") else "CNAME", value)
    wrong = table.get_by_role("row", name="hd2._domainkey.acme.example")
    zone.remove("hd2._domainkey.acme.example")
    zone.add("hd2._domainkey.acme.example", "CNAME", "elsewhere.example")
    page.get_by_role("button", name="Check now").click()
    expect(wrong).to_contain_text("points elsewhere: hd2._domainkey.acme.example points to "
                                  "elsewhere.example")
    expect(page.get_by_role("heading", name="acme.example Pending")).to_be_visible()

    zone.remove("hd2._domainkey.acme.example")
    zone.add("hd2._domainkey.acme.example", "CNAME", dict(_records(page))[
        "hd2._domainkey.acme.example"])
    page.get_by_role("button", name="Check now").click()
    expect(page.get_by_role("status")).to_contain_text("acme.example is verified")
    expect(page.get_by_role("heading", name="acme.example Verified")).to_be_visible()
    expect(table.get_by_role("row", name="_dmarc.acme.example")).to_contain_text("Verified")
    snapshots.clear()  # the snapshot's 5 seconds
    assert api.post(SEND, data=body, headers={"X-Api-Key": key}).status == 202


def _records(page: Page) -> list[tuple[str, str]]:
    table = page.get_by_role("table", name=re.compile("DNS records of"))
    out = []
    for row in table.get_by_role("row").all()[1:]:
        host = row.get_by_role("rowheader").locator("code").inner_text()
        out.append((host, row.locator("code").nth(1).inner_text()))
    return out


def test_the_copy_button_copies_the_value(page: Page, zoned, context):
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    _owner(page)
    page.get_by_role("textbox", name="Domain").fill("acme.example")
    page.get_by_role("button", name="Add domain").click()
    row = page.get_by_role("row", name="hrp.acme.example")
    row.get_by_role("button", name="Copy").last.click()
    expect(row.get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == "rp.herald.test"
    row.get_by_role("button", name="Copy").first.click()  # the host, typed in DNS panels
    expect(row.get_by_role("button", name="Copied")).to_have_count(2)
    assert page.evaluate("navigator.clipboard.readText()") == "hrp.acme.example"


@pytest.mark.parametrize("text, words", [
    ("192.0.2.1", "An IP address is not a domain"),
    ("https://acme.example/", "not a URL"),
    ("a" * 64 + ".example", "a label of 64 characters"),
])
def test_a_bad_domain_is_marked_on_its_field(page: Page, zoned, text, words):
    _owner(page, "admin")
    page.get_by_role("textbox", name="Domain").fill(text)
    page.get_by_role("button", name="Add domain").click()
    field = page.get_by_role("textbox", name="Domain")
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_have_value(text)
    expect(page.get_by_role("alert")).to_contain_text(words)
    assert not Sender.select().where(Sender.kind == "domain",
                                     Sender.value != "example.com").exists()


def test_a_single_sender_confirms_through_its_email_link(page: Page, zoned):
    _owner(page)
    page.get_by_role("textbox", name="Email address").fill("ops@other.example")
    page.get_by_role("textbox", name="From name").fill("Acme Ops")
    page.get_by_role("button", name="Add sender").click()
    expect(page.get_by_role("textbox", name="Postal address")).to_have_attribute(
        "aria-invalid", "true")
    page.get_by_role("textbox", name="Postal address").fill("Acme Ltd\n1 Harbour Road")
    page.get_by_role("button", name="Add sender").click()
    expect(page.get_by_role("row", name="ops@other.example")).to_contain_text("Pending")
    page.get_by_role("row", name="ops@other.example").get_by_role(
        "button", name="Resend link").click()
    mails = [m for m in InboxMessage.select().order_by(InboxMessage.id)
             if m.to == ["ops@other.example"]]
    assert len(mails) == 2
    link = re.search(r"https?://\S+/senders/confirm/\S+", mails[-1].text)[0]
    old = re.search(r"https?://\S+/senders/confirm/\S+", mails[0].text)[0]
    page.goto(link)
    expect(page.get_by_role("button", name="Confirm")).to_be_visible()
    assert Sender.get(Sender.value == "ops@other.example").status == "pending"
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("ops@other.example is now a verified")
    page.goto(old)
    expect(page.get_by_role("alert")).to_contain_text("not valid")


def test_removing_a_sender_live_templates_use_names_them_first(page: Page, zoned):
    ws = _owner(page)
    tpl = factories.template(ws)  # from hello@example.com: the account's declared domain
    factories.Template.update(name="Welcome").where(factories.Template.id == tpl.id).execute()
    page.goto(f"/w/{ws.id}/settings/senders")
    page.get_by_role("region", name="example.com").get_by_role("button",
                                                                name="Remove").click()
    expect(page.get_by_role("alert")).to_contain_text("These live templates send from it")
    expect(page.get_by_role("listitem").filter(has_text=f"Welcome ({ws.name})")).to_be_visible()
    page.get_by_role("button", name="Remove").click()
    expect(page.get_by_role("status")).to_contain_text("example.com is no longer a sender")
    assert not Sender.select().where(Sender.value == "example.com").exists()


def test_members_do_not_see_senders_and_another_accounts_sender_is_a_404(page: Page, zoned):
    ws = _owner(page, "member")
    expect(page.get_by_role("link", name="Senders")).to_have_count(0)
    assert page.request.get(f"/w/{ws.id}/settings/senders").status == 403
    other = factories.workspace()
    theirs = Sender.get(Sender.account == other.account_id)
    make_user("ada@example.com", ws, "owner")  # now an Owner here, never of ``other``
    response = page.request.get(f"/w/{ws.id}/settings/senders/{theirs.id}/remove")
    assert response.status == 404
