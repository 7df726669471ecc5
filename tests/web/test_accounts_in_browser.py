"""Accounts people can trust (issue 36), in Chromium by WEB.md's names: invitations that
prove the address, a common password refused, two-factor sign-in, sessions a person ends."""

from __future__ import annotations

import re
import time

import pyotp
from playwright.sync_api import Browser, Page, expect

from engine.database.models.people import Membership
from engine.people import invitations
from tests import factories
from tests.web.axe import violations
from tests.web.conftest import PASSWORD, make_user, sign_in


def _invite(live, ws, email: str, role: str = "member", by=None, by_role=None) -> str:
    issued = invitations.invite(ws, email, role, by, by_role, live.url)
    return issued.url.removeprefix(live.url)


def _accept_as_new(page: Page, path: str, name: str, password: str) -> None:
    page.goto(path)
    page.get_by_role("textbox", name="Name").fill(name)
    page.get_by_role("textbox", name="Password").fill(password)
    page.get_by_role("button", name="Accept invitation").click()


def test_an_account_made_through_one_invitation_joins_no_other_by_itself(page: Page, live):
    alpha, bravo = factories.workspace(), factories.workspace()
    alpha_admin = make_user("admin@alpha.example", alpha, "admin", "Alpha Admin")
    _accept_as_new(page, _invite(live, alpha, "newhire@bravo.example", "member", alpha_admin,
                                 "admin"), "New Hire", "attacker chosen secret")
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    invitations.invite(bravo, "newhire@bravo.example", "admin", None, None, live.url)
    page.goto("/workspaces")
    expect(page.get_by_role("link", name=alpha.name).first).to_be_visible()
    expect(page.get_by_role("link", name=bravo.name)).to_have_count(0)
    assert page.goto(f"/w/{bravo.id}/settings/api-keys").status == 404
    assert not Membership.select().where(Membership.workspace == bravo).exists()


def test_a_common_password_is_refused_with_a_reason(page: Page, live):
    ws = factories.workspace()
    _accept_as_new(page, _invite(live, ws, "grace@example.com"), "Grace", "password1234")
    password = page.get_by_role("textbox", name="Password")
    expect(password).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_text("one of the most common passwords").first).to_be_visible()
    password.fill("qwertyuiop12")
    page.get_by_role("button", name="Accept invitation").click()
    expect(page.get_by_text("easy to guess").first).to_be_visible()
    password.fill("lantern orbit cactus")
    page.get_by_role("button", name="Accept invitation").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()


def _turn_on_two_factor(page: Page) -> tuple[pyotp.TOTP, list[str]]:
    page.get_by_role("link", name="Account", exact=True).click()
    page.get_by_role("button", name="Set up two-factor authentication").click()
    secret = page.get_by_role("textbox", name="Secret key").input_value()
    expect(page.get_by_role("img", name="QR code of the secret key")).to_be_visible()
    assert violations(page) == []
    totp = pyotp.TOTP(secret)
    page.get_by_role("textbox", name="Code").fill("000000" if totp.now() != "000000"
                                                  else "111111")
    page.get_by_role("button", name="Turn on two-factor authentication").click()
    expect(page.get_by_role("textbox", name="Code")).to_have_attribute("aria-invalid", "true")
    page.get_by_role("textbox", name="Code").fill(totp.now())
    page.get_by_role("button", name="Turn on two-factor authentication").click()
    codes = page.get_by_role("textbox", name="Recovery codes").input_value().split("\n")
    assert violations(page) == []
    assert len(codes) == 10 and len(set(codes)) == 10
    return totp, codes


def _sign_in_with_code(page: Page, code: str, email: str = "ada@example.com") -> None:
    page.goto("/")
    page.get_by_role("textbox", name="Email").fill(email)
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.get_by_role("textbox", name="Code").fill(code)
    page.get_by_role("button", name="Continue").click()


def _sign_out(page: Page) -> None:
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("button", name="Sign in", exact=True)).to_be_visible()


def test_two_factor_sign_in_with_a_code_and_once_with_each_recovery_code(page: Page, live):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner", "Ada")
    sign_in(page, "ada@example.com")
    totp, codes = _turn_on_two_factor(page)
    _sign_out(page)
    # The code of the next time step: the current one was used to turn it on, and no code
    # works twice.
    _sign_in_with_code(page, totp.at(time.time() + totp.interval))
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    _sign_out(page)
    _sign_in_with_code(page, codes[0])
    expect(page.get_by_role("status").first).to_contain_text("9 left")
    _sign_out(page)
    _sign_in_with_code(page, codes[0])  # used: refused, the field marked
    expect(page.get_by_role("textbox", name="Code")).to_have_attribute("aria-invalid", "true")
    assert violations(page) == []
    expect(page.get_by_role("button", name="Sign out")).to_have_count(0)
    page.get_by_role("textbox", name="Code").fill(codes[1].upper().replace("-", " "))
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()


def test_an_owner_requires_two_factor_and_a_member_is_led_to_set_it_up(page: Page, live):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner", "Ada")
    make_user("bob@example.com", ws, "member", "Bob")
    sign_in(page, "ada@example.com")
    page.goto(f"/w/{ws.id}/settings/members")
    page.get_by_role("button", name="Require two-factor authentication").click()
    # The Owner, too, is led to set it up before going on.
    expect(page.get_by_role("button", name="Set up two-factor authentication")).to_be_visible()
    _sign_out(page)
    sign_in(page, "bob@example.com")
    expect(page.get_by_role("status").first).to_contain_text(
        "requires two-factor authentication")
    _turn_on_two_factor(page)
    page.goto(f"/w/{ws.id}/templates")
    expect(page.get_by_role("link", name="Templates")).to_be_visible()


def test_ending_another_session_signs_it_out_at_once(page: Page, browser: Browser, live):
    make_user("ada@example.com", factories.workspace(), "owner", "Ada")
    other = browser.new_context(base_url=live.url)
    phone = other.new_page()
    try:
        sign_in(phone, "ada@example.com")
        sign_in(page, "ada@example.com")
        page.get_by_role("link", name="Account", exact=True).click()
        rows = page.get_by_role("row").filter(has=page.get_by_role("cell"))
        expect(rows).to_have_count(2)
        expect(page.get_by_text("This session", exact=True)).to_have_count(1)
        page.get_by_role("button", name="End session").click()
        expect(page.get_by_role("status").first).to_contain_text("signed out")
        expect(page.get_by_role("button", name="End session")).to_have_count(0)
        phone.reload()
        expect(phone.get_by_role("button", name="Sign in", exact=True)).to_be_visible()
        expect(phone).to_have_url(re.compile(r"/(\?next=.*)?$"))
    finally:
        other.close()


def test_a_real_worker_sends_the_reset_mail_the_request_queued(page: Page, live):
    from engine.database.models.inbox import InboxMessage
    from tests.web.authoring_support import running_worker, wait_for

    make_user("ada@example.com", factories.workspace(), "owner", "Ada")
    page.goto("/reset")
    page.get_by_role("textbox", name="Email").fill("ada@example.com")
    page.get_by_role("button", name="Send reset link").click()
    expect(page.get_by_role("status")).to_contain_text("on its way")
    assert InboxMessage.select().count() == 0
    with running_worker(live):
        (mail,) = wait_for(lambda: list(InboxMessage.select()), "the reset mail")
    assert mail.to == ["ada@example.com"] and "/reset/" in mail.text
