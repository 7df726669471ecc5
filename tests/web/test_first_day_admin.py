"""What a first-day admin tripped on (issue 40), in Chromium: Move offers no folder inside
the one moved; Copy buttons only where they work; buttons of a row say their row; the dev
inbox's JSON link; report cards that add up."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from engine.authoring import hierarchy
from engine.database.models import Account
from engine.senders import domains
from tests import factories
from tests.web.conftest import make_user, sign_in
from tests.web.test_senders_page import zoned  # noqa: F401 (a fixture)


def test_move_offers_no_folder_inside_the_folder_moved(page: Page, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    project = hierarchy.create_project(ws, "Onboarding")
    outer = hierarchy.create_folder(project, None, "Welcome")
    inner = hierarchy.create_folder(project, outer, "Day one")
    hierarchy.create_folder(project, None, "Billing")
    sign_in(page, "mia@example.com")
    page.goto(f"/w/{ws.id}/folders/{outer.id}/manage")
    options = page.get_by_role("combobox", name="Location").locator("option")
    expect(options).to_have_text(["Onboarding", "Onboarding / Billing"])
    # A folder inside it may still move anywhere but into itself.
    page.goto(f"/w/{ws.id}/folders/{inner.id}/manage")
    expect(page.get_by_role("combobox", name="Location").locator("option")).to_have_text(
        ["Onboarding", "Onboarding / Billing", "Onboarding / Welcome"])


def _domain_owner(page: Page) -> object:
    account = factories.account(name="Acme")
    ws = factories.workspace(account)
    make_user("ada@example.com", ws, "owner", "Ada")
    domains.add_domain(Account.get_by_id(account.id), "acme.example")
    sign_in(page, "ada@example.com")
    page.goto(f"/w/{ws.id}/settings/senders")
    return ws


def test_copy_buttons_show_only_where_javascript_can_copy(browser: Browser, zoned):  # noqa: F811
    context = browser.new_context(base_url=zoned.url)
    page = context.new_page()
    _domain_owner(page)
    expect(page.get_by_role("button", name="Copy")).to_have_count(8)  # each host and value
    context.close()

    bare = browser.new_context(base_url=zoned.url, java_script_enabled=False)
    page = bare.new_page()
    page.goto("/")
    page.get_by_role("textbox", name="Email").fill("ada@example.com")
    page.get_by_role("textbox", name="Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.get_by_role("link", name="Settings").click()
    page.get_by_role("link", name="Senders").click()
    expect(page.get_by_role("table", name="DNS records of acme.example")).to_be_visible()
    expect(page.get_by_role("button", name="Copy")).to_have_count(0)
    expect(page.get_by_role("button", name="Check now acme.example")).to_be_visible()
    bare.close()


def test_buttons_of_a_row_say_which_row(page: Page, live):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner", "Ada")
    make_user("bob@example.com", ws, "member", "Bob")
    factories.api_key(ws, name="web-main")
    factories.api_key(ws, name="billing")
    sign_in(page, "ada@example.com")
    page.goto(f"/w/{ws.id}/settings/api-keys")
    # The visible word stays (WEB.md's `Revoke`); the name says the row.
    expect(page.get_by_role("button", name="Revoke", exact=True)).to_have_count(0)
    button = page.get_by_role("button", name="Revoke key web-main", exact=True)
    expect(button).to_have_text("Revoke")
    button.click()
    expect(page.get_by_text("web-main")).not_to_have_count(0)
    page.goto(f"/w/{ws.id}/settings/members")
    expect(page.get_by_role("button", name="Remove bob@example.com", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="Change role of bob@example.com", exact=True)
           ).to_be_visible()


def test_the_dev_inbox_is_linked_and_its_json_link_opens_the_messages(page: Page, live):
    page.goto("/")
    page.get_by_role("link", name="Dev inbox").click()
    expect(page.get_by_role("main")).to_be_visible()
    with page.expect_navigation():
        page.get_by_role("link", name="/dev/inbox/messages").click()
    assert json.loads(page.locator("body").inner_text()) == []


def test_use_the_default_provider_asks_first(page: Page, live):
    from engine.database.models import Workspace

    ws = factories.workspace()
    ws.email_provider = json.dumps({"plugin": "smtp",
                                    "url": "smtp://mailer:s3cret@mail.acme.example:587"})
    ws.save()
    make_user("ada@example.com", ws, "admin", "Ada")
    sign_in(page, "ada@example.com")
    page.goto(f"/w/{ws.id}/settings/email-provider")
    page.get_by_role("button", name="Use the default provider").click()
    expect(page.get_by_role("heading", name="Use the service's default provider?")
           ).to_be_visible()
    expect(page.get_by_text("smtp://mail.acme.example:587")).to_be_visible()
    assert Workspace.get_by_id(ws.id).email_provider  # nothing deleted by asking
    page.get_by_role("link", name="Cancel").click()
    page.get_by_role("button", name="Use the default provider").click()
    page.get_by_role("button", name="Use the default provider").click()
    expect(page.get_by_text("through the service's default provider")).not_to_have_count(0)
    assert not Workspace.get_by_id(ws.id).email_provider


def test_report_cards_add_up_and_a_timeline_shows_its_message(page: Page, live):
    from tests.web.test_reports_page import count, mixed_run

    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    run, made = mixed_run(ws)
    run.sent("suppressed", to=("left@example.net",))
    run.sent("queued", to=("later@example.net",))
    sign_in(page, "mia@example.com", start=f"/w/{ws.id}/reports/")
    assert count(page, "Suppressed") == 1 and count(page, "Pending") == 1
    parts = [count(page, label) for label in
             ("Delivered", "Bounced", "Failed", "Suppressed", "Cancelled", "Pending")]
    assert sum(parts) == count(page, "Accepted") == 7
    expect(page.get_by_text(" + ".join(map(str, parts)) + " = 7")).to_be_visible()

    page.goto(f"/w/{ws.id}/reports/notifications/{made['opened'].id}")
    message = page.get_by_role("region", name="Message")
    expect(message).to_contain_text("Hello Ada")  # the subject and text as sent
    page.get_by_role("link", name="T", exact=True).click()
    expect(page.get_by_role("button", name="Publish")).to_be_visible()


def test_the_audit_log_reads_in_words_filters_and_exports(page: Page, live):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner", "Ada")
    make_user("bob@example.com", ws, "admin", "Bob")
    sign_in(page, "ada@example.com")
    page.goto(f"/w/{ws.id}/settings/api-keys")
    page.get_by_role("textbox", name="Name").fill("web-main")
    page.get_by_role("button", name="Create API key").click()
    page.get_by_role("button", name="Revoke key web-main").click()
    page.get_by_role("button", name="Revoke").click()
    # Each answer seen before the next page: a goto made while a form's POST is still
    # being sent cancels it.
    expect(page.get_by_text("is revoked")).to_be_visible()
    page.goto(f"/w/{ws.id}/settings/webhooks/rotate")
    page.get_by_role("button", name="Rotate signing secret").click()
    expect(page.get_by_role("textbox", name="New signing secret")).to_be_visible()
    page.get_by_role("link", name="Audit log").click()
    rows = page.get_by_role("table").get_by_role("row")
    expect(rows.nth(1)).to_contain_text("Webhook signing secret rotated")
    expect(rows.nth(3)).to_contain_text("API key created")
    expect(rows.nth(3)).to_contain_text("web-main")
    expect(rows.nth(3)).to_contain_text("expires at: none")  # not `expiresAt: None`
    for code in ("api_key.created", "None", "True"):
        expect(page.get_by_role("table")).not_to_contain_text(code)

    page.get_by_role("combobox", name="What").select_option(label="API key")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(3)  # the header, created, revoked
    with page.expect_download() as download:
        page.get_by_role("link", name="Export CSV").click()
    exported = Path(download.value.path()).read_text(encoding="utf-8").splitlines()
    assert exported[0] == "at,who,what,action,subject,details"
    assert [line.split(",")[2:4] for line in exported[1:]] == [
        ["API key revoked", "api_key.revoked"], ["API key created", "api_key.created"]]
    page.get_by_role("combobox", name="What").select_option(label="Everything")
    page.get_by_role("combobox", name="Who").select_option("ada@example.com")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(4)
    page.goto(f"/w/{ws.id}/settings/audit-log?who=bob@example.com")
    expect(page.get_by_text("No event matches.")).to_be_visible()


def test_the_settings_page_summarises_the_workspace(page: Page, live):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner", "Ada")
    make_user("bob@example.com", ws, "member", "Bob")
    factories.api_key(ws, name="web-main")
    factories.api_key(ws, name="billing")
    sign_in(page, "ada@example.com")
    page.goto(f"/w/{ws.id}/settings/")
    summary = page.get_by_role("table", name="This workspace at a glance")
    expect(summary.get_by_role("row", name="API keys")).to_contain_text("2 active keys")
    expect(summary.get_by_role("row", name="Members")).to_contain_text("2 members")
    expect(summary.get_by_role("row", name="Email provider")).to_contain_text(
        "The service's default provider")
    page.get_by_role("link", name="Members").click()  # one link: the navigation's
    expect(page.get_by_role("heading", name="Members")).to_be_visible()
