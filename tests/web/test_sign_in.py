"""Signing in and out, as a person does it, and the refusals around it."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests import factories
from tests.web.conftest import PASSWORD, make_user, sign_in


def test_sign_in_lands_in_the_workspace_and_sign_out_ends_the_session(page: Page, live):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner", "Ada")
    sign_in(page, "ADA@example.com")
    expect(page.get_by_role("heading", name="Templates")).to_be_visible()
    for link in ("Templates", "Reports", "Settings"):
        expect(page.get_by_role("link", name=link, exact=True)).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("button", name="Sign in", exact=True)).to_be_visible()
    page.goto(f"/w/{ws.id}/templates")
    expect(page.get_by_role("button", name="Sign in", exact=True)).to_be_visible()


def test_a_wrong_password_is_the_form_again_with_the_field_marked(page: Page, live):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner")
    page.goto("/")
    page.get_by_role("textbox", name="Email").fill("ada@example.com")
    page.get_by_role("textbox", name="Password").fill(PASSWORD + "x")
    page.get_by_role("button", name="Sign in", exact=True).click()
    password = page.get_by_role("textbox", name="Password")
    expect(password).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_text("The email address or the password is not right.").first
           ).to_be_visible()
    expect(page.get_by_role("textbox", name="Email")).to_have_value("ada@example.com")


def test_sign_in_returns_to_the_page_asked_for_and_never_off_site(page: Page, live):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner")
    page.goto(f"/w/{ws.id}/settings/members")
    assert "/?next=" in page.url
    sign_in(page, "ada@example.com", start=page.url)
    expect(page).to_have_url(f"{live.url}/w/{ws.id}/settings/members")
    page.get_by_role("button", name="Sign out").click()
    for target in ("//evil.example/x", "/\\evil.example", "/%09/evil.example",
                   "https://evil.example"):
        sign_in(page, "ada@example.com", start=f"/?next={target}")
        assert page.url.startswith(live.url), target
        page.get_by_role("button", name="Sign out").click()
