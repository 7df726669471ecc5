"""Suppressions, members, the email provider and the audit log, with their bad input."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Page, expect

from engine.catalog import suppressions
from engine.database.db import database
from engine.database.models import Suppression, Workspace
from engine.database.models.inbox import InboxMessage
from engine.database.models.people import Membership
from engine.queue.embedded_redis import free_port
from tests import factories
from tests.support.smtp_server import start_smtp
from tests.web.conftest import csrf_token, make_user, sign_in


def _admin(page: Page, role: str = "owner"):
    ws = factories.workspace()
    make_user("ada@example.com", ws, role, "Ada")
    sign_in(page, "ada@example.com")
    return ws


def test_suppressions_search_remove_import_and_export(page: Page, live, tmp_path):
    ws = _admin(page, "admin")
    suppressions.add(ws.id, ["bounced@example.net"], "bounce")
    page.goto(f"/w/{ws.id}/settings/suppressions")
    expect(page.get_by_role("row", name="bounced@example.net")).to_contain_text("bounce")
    page.get_by_role("textbox", name="Email address").fill("not an address")
    page.get_by_role("button", name="Add suppression").click()
    field = page.get_by_role("textbox", name="Email address")
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_have_value("not an address")
    bad = tmp_path / "bad.csv"
    bad.write_text("email\nok@example.com\nnonsense\n")
    page.get_by_label("CSV file").set_input_files(str(bad))
    page.get_by_role("button", name="Import CSV").click()
    expect(page.get_by_label("CSV file")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_role("alert")).to_contain_text(
        "line 3: “nonsense” is not an email address")
    assert not Suppression.select().where(Suppression.address == "ok@example.com").exists()
    good = tmp_path / "good.csv"
    good.write_text("email,name\nok@example.com,OK\n'=evil@example.com,E\n")
    page.get_by_label("CSV file").set_input_files(str(good))
    page.get_by_role("button", name="Import CSV").click()
    expect(page.get_by_role("status")).to_contain_text("2 added")
    page.get_by_role("textbox", name="Search").fill("evil")
    page.get_by_role("button", name="Search").click()
    expect(page.get_by_role("row")).to_have_count(2)  # the header and =evil@example.com
    with page.expect_download() as download:
        page.get_by_role("link", name="Export CSV").click()
    exported = Path(download.value.path()).read_text().splitlines()
    assert exported == ["address,reason,createdAt,scope", *sorted(exported[1:])]
    assert any(line.startswith("'=evil@example.com,manual,") for line in exported)
    assert any(line.startswith("bounced@example.net,bounce,") and line.endswith(",all")
               for line in exported)
    page.goto(f"/w/{ws.id}/settings/suppressions")
    page.get_by_role("row", name="bounced@example.net").get_by_role("button",
                                                                     name="Remove").click()
    page.get_by_role("button", name="Remove").click()
    expect(page.get_by_role("row", name="bounced@example.net")).to_have_count(0)
    assert suppressions.add(ws.id, ["bounced@example.net"], "manual") == 1  # it was gone


def test_members_roles_and_the_last_owner(page: Page, live):
    ws = _admin(page)
    bob = make_user("bob@example.com", ws, "member", "Bob")
    page.goto(f"/w/{ws.id}/settings/members")
    page.get_by_role("combobox", name="Access level of bob@example.com").select_option("Admin")
    page.get_by_role("row", name="Bob").get_by_role("button", name="Change role").click()
    expect(page.get_by_role("status")).to_contain_text("bob@example.com is now Admin")
    assert Membership.get(Membership.user == bob).role == "admin"
    # The only Owner is offered neither a role nor Leave; asked anyway, the server refuses.
    expect(page.get_by_role("combobox", name="Access level of ada@example.com")
           ).to_have_count(0)
    expect(page.get_by_role("button", name="Leave workspace")).to_have_count(0)
    ada = Membership.get(Membership.workspace == ws, Membership.role == "owner")
    token = csrf_token(page)
    for path, form in (("role", {"role": "member"}), ("remove", {})):
        refused = page.request.post(f"/w/{ws.id}/settings/members/{ada.id}/{path}",
                                    form={"csrf_token": token, **form})
        assert "always keeps one Owner" in refused.text()
    assert Membership.get_by_id(ada.id).role == "owner"
    page.get_by_role("textbox", name="Email").fill("bob@example.com")
    page.get_by_role("button", name="Send invitation").click()
    expect(page.get_by_role("textbox", name="Email")).to_have_attribute("aria-invalid", "true")
    page.get_by_role("row", name="Bob").get_by_role("button", name="Remove").click()
    page.get_by_role("button", name="Remove").click()
    expect(page.get_by_role("row", name="Bob")).to_have_count(0)
    assert Membership.select().where(Membership.workspace == ws).count() == 1


def test_an_admin_cannot_invite_an_owner_nor_change_roles(page: Page, live):
    ws = _admin(page, "admin")
    page.goto(f"/w/{ws.id}/settings/members")
    expect(page.get_by_role("combobox", name="Role").locator("option")).to_have_text(
        ["Member", "Admin"])
    token = csrf_token(page)
    forged = page.request.post(f"/w/{ws.id}/settings/members",
                               form={"csrf_token": token, "email": "boss@example.com",
                                     "role": "owner"})
    assert forged.status == 403
    mine = Membership.get(Membership.workspace == ws)
    promoted = page.request.post(f"/w/{ws.id}/settings/members/{mine.id}/role",
                                 form={"csrf_token": token, "role": "owner"})
    assert promoted.status == 403
    assert Membership.get_by_id(mine.id).role == "admin"


def test_email_provider_is_checked_stored_sealed_and_tested(page: Page, live):
    ws = _admin(page)
    page.goto(f"/w/{ws.id}/settings/email-provider")
    url = page.get_by_role("textbox", name="Provider URL")
    url.fill("smtp://user:pa55word@mail.example.com:587?tls=bogus")
    page.get_by_role("button", name="Save").click()
    expect(url).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_role("alert")).to_contain_text("tls must be one of")
    url.fill("nosuch://x")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("alert")).to_contain_text("no provider plugin")
    assert Workspace.get_by_id(ws.id).email_provider is None
    url.fill("inbox://")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_contain_text("Saved")
    expect(page.get_by_role("textbox", name="Provider URL")).to_have_value("")
    # Read past the field's decryption: what the database itself holds.
    db = database.obj
    (raw,) = db.execute_sql(f"SELECT email_provider FROM workspace WHERE id = {db.param}",
                            (Workspace.id.db_value(ws.id),)).fetchone()
    assert raw.startswith("enc:v1:") and "inbox" not in raw
    assert json.loads(Workspace.get_by_id(ws.id).email_provider)["plugin"] == "inbox"
    page.get_by_role("textbox", name="Test recipient").fill("check@example.org")
    page.get_by_role("button", name="Send test").click()
    expect(page.get_by_role("status").last).to_contain_text("accepted")
    (sent,) = InboxMessage.select().where(InboxMessage.workspace_id == str(ws.id))
    assert sent.to == ["check@example.org"] and sent.subject == "Herald test message"


def test_the_audit_log_lists_changes_newest_first_without_secrets(page: Page, live):
    ws = _admin(page)
    page.goto(f"/w/{ws.id}/settings/api-keys")
    page.get_by_role("textbox", name="Name").fill("ci")
    page.get_by_role("button", name="Create API key").click()
    key = page.get_by_role("textbox", name="New API key").input_value()
    page.goto(f"/w/{ws.id}/settings/webhooks/rotate")
    page.get_by_role("button", name="Rotate signing secret").click()
    secret = page.get_by_role("textbox", name="New signing secret").input_value()
    page.goto(f"/w/{ws.id}/settings/email-provider")
    page.get_by_role("textbox", name="Provider URL").fill("smtp://u:hunter2hunter2@m.example:25")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Saved: this workspace's email goes through")).to_be_visible()
    page.get_by_role("link", name="Audit log").click()
    rows = page.get_by_role("row")
    expect(rows.nth(1)).to_contain_text("Email provider changed")
    expect(rows.nth(2)).to_contain_text("Webhook signing secret rotated")
    expect(rows.nth(3)).to_contain_text("API key created")
    expect(rows.nth(3)).to_contain_text("ada@example.com")
    html = page.content()
    for value in (key, secret, "hunter2hunter2"):
        assert value not in html
    page.goto(f"/w/{ws.id}/settings/email-provider")
    assert "hunter2hunter2" not in page.content()
    expect(page.get_by_text("smtp://m.example:25")).to_be_visible()


def test_send_test_shows_the_smtp_servers_answer(page: Page, live):
    controller, smtp = start_smtp(free_port())
    try:
        ws = _admin(page)
        page.goto(f"/w/{ws.id}/settings/email-provider")
        page.get_by_role("textbox", name="Provider URL").fill(
            f"smtp://127.0.0.1:{controller.port}?tls=none&timeout=5")
        page.get_by_role("button", name="Save").click()
        expect(page.get_by_text(f"smtp://127.0.0.1:{controller.port}").first).to_be_visible()
        page.get_by_role("textbox", name="Test recipient").fill("ops@example.org")
        page.get_by_role("button", name="Send test").click()
        expect(page.get_by_role("heading", name="The provider accepted the message")
               ).to_be_visible()
        (arrived,) = smtp.received
        assert arrived.rcpt_tos == ["ops@example.org"]
        smtp.refuse["gone@example.org"] = "550 5.1.1 no such mailbox here"
        page.get_by_role("textbox", name="Test recipient").fill("gone@example.org")
        page.get_by_role("button", name="Send test").click()
        expect(page.get_by_role("heading", name="The provider did not accept the message")
               ).to_be_visible()
        # The refusal, with its code; never the server's own words (docs/web.md).
        expect(page.get_by_role("status").last).to_contain_text("(status 550)")
        assert "no such mailbox here" not in page.content()
    finally:
        controller.stop()


def test_a_provider_list_is_stored_in_order_and_its_test_fails_over(page: Page, live):
    dead = free_port()  # a stopped server: nothing listens there
    controller, smtp = start_smtp(free_port())
    try:
        ws = _admin(page)
        page.goto(f"/w/{ws.id}/settings/email-provider")
        urls = page.get_by_role("textbox", name="Provider URL")
        urls.fill(f"smtp://127.0.0.1:{dead}?timeout=5\nsmtp://127.0.0.1:{controller.port}"
                  "?tls=bogus")
        page.get_by_role("button", name="Save").click()
        expect(page.get_by_role("alert")).to_contain_text("Provider 2: this URL cannot send")
        assert Workspace.get_by_id(ws.id).email_provider is None
        urls.fill(f"smtp://127.0.0.1:{dead}?timeout=5\nsmtp://127.0.0.1:{controller.port}")
        page.get_by_role("button", name="Save").click()
        expect(page.get_by_role("status")).to_contain_text("Saved")
        stored = json.loads(Workspace.get_by_id(ws.id).email_provider)
        assert [entry["url"] for entry in stored] == [
            f"smtp://127.0.0.1:{dead}?timeout=5", f"smtp://127.0.0.1:{controller.port}"]
        items = page.get_by_role("listitem").filter(has_text="smtp://127.0.0.1:")
        expect(items).to_have_text([f"smtp://127.0.0.1:{dead}",
                                    f"smtp://127.0.0.1:{controller.port}"])
        page.get_by_role("textbox", name="Test recipient").fill("ops@example.org")
        page.get_by_role("button", name="Send test").click()
        expect(page.get_by_role("heading", name="The provider accepted the message")
               ).to_be_visible()
        expect(page.get_by_role("status").last).to_contain_text(
            f"by smtp://127.0.0.1:{controller.port}")
        expect(page.get_by_role("status").last).to_contain_text(
            f"smtp://127.0.0.1:{dead}: transient")
        (arrived,) = smtp.received
        assert arrived.rcpt_tos == ["ops@example.org"]
    finally:
        controller.stop()
