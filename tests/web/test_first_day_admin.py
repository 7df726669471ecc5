"""What a first-day admin tripped on (issue 40), in Chromium: Move offers no folder inside
the one moved; Copy buttons only where they work; buttons of a row say their row; the dev
inbox's JSON link; report cards that add up."""

from __future__ import annotations

import json

from playwright.sync_api import Browser, Page, expect

from engine.authoring import hierarchy
from engine.senders import domains
from engine.store.models import Account
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
    expect(page.get_by_role("button", name="Copy")).to_have_count(4)
    context.close()

    bare = browser.new_context(base_url=zoned.url, java_script_enabled=False)
    page = bare.new_page()
    page.goto("/")
    page.get_by_role("textbox", name="Email").fill("ada@example.com")
    page.get_by_role("textbox", name="Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()
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


def test_the_dev_inbox_json_link_opens_the_messages(page: Page, live):
    page.goto("/dev/inbox")
    expect(page.get_by_role("main")).to_be_visible()
    with page.expect_navigation():
        page.get_by_role("link", name="/dev/inbox/messages").click()
    assert json.loads(page.locator("body").inner_text()) == []
