"""Invitations and password resets in the browser: the links work once, within their time,
and every refused value is the form again with its field marked."""

from __future__ import annotations

import datetime as dt
import re

from playwright.sync_api import Page, expect

from engine.database.models import utcnow
from engine.database.models.inbox import InboxMessage
from engine.database.models.people import Invitation, Membership
from engine.people import invitations, users
from tests import factories
from tests.support.queued_mail import run_queued_mail
from tests.web.conftest import PASSWORD, make_user, sign_in


def _invite(live, ws, email="new@example.com", role="member"):
    issued = invitations.invite(ws, email, role, None, None, live.url)
    return issued.url.removeprefix(live.url)


def test_a_new_person_accepts_with_name_and_password_and_is_signed_in(page: Page, live):
    ws = factories.workspace()
    path = _invite(live, ws)
    page.goto(path)
    page.get_by_role("textbox", name="Name").fill("Grace")
    page.get_by_role("textbox", name="Password").fill("too short")
    page.get_by_role("button", name="Accept invitation").click()
    password = page.get_by_role("textbox", name="Password")
    expect(password).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_text("Use at least 10 characters.").first).to_be_visible()
    expect(page.get_by_role("textbox", name="Name")).to_have_value("Grace")  # nothing lost
    password.fill(PASSWORD)
    page.get_by_role("button", name="Accept invitation").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    expect(page.get_by_role("link", name="Settings")).to_be_visible()
    member = Membership.get(Membership.workspace == ws)
    assert (member.user.email, member.user.name, member.role) == (
        "new@example.com", "Grace", "member")


def test_a_used_link_and_an_expired_link_say_so(page: Page, live):
    ws = factories.workspace()
    used = _invite(live, ws, "used@example.com")
    invitations.accept_new(used.rsplit("/", 1)[1], "Used", PASSWORD)
    page.goto(used)
    expect(page.get_by_role("alert")).to_contain_text("already been used")
    expect(page.get_by_role("button", name="Accept invitation")).to_have_count(0)
    late = _invite(live, ws, "late@example.com")
    Invitation.update(expires_at=utcnow() - dt.timedelta(seconds=1)).where(
        Invitation.email == "late@example.com").execute()
    page.goto(late)
    expect(page.get_by_role("alert")).to_contain_text("expired")
    assert users.find("late@example.com") is None


def test_an_existing_account_joins_only_after_its_own_sign_in(page: Page, live):
    home, other = factories.workspace(), factories.workspace()
    make_user("ada@example.com", home, "owner", "Ada")
    path = _invite(live, other, "ada@example.com", "admin")
    page.goto(path)
    # The page takes no password of an existing account: it sends the person to sign in.
    expect(page.get_by_role("textbox", name="Name")).to_have_count(0)
    expect(page.get_by_role("textbox", name="Password")).to_have_count(0)
    assert not Membership.select().where(Membership.workspace == other).exists()
    page.get_by_role("link", name="Sign in to accept").click()
    page.get_by_role("textbox", name="Email").fill("ada@example.com")
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page).to_have_url(re.compile(re.escape(path) + "$"))
    assert not Membership.select().where(Membership.workspace == other).exists()
    page.get_by_role("button", name="Accept invitation").click()
    expect(page.get_by_role("link", name="Settings")).to_be_visible()
    assert Membership.get(Membership.workspace == other).role == "admin"


def test_another_signed_in_account_cannot_accept(page: Page, live):
    home, other = factories.workspace(), factories.workspace()
    make_user("eve@example.com", home, "owner", "Eve")
    path = _invite(live, other, "ada@example.com", "admin")
    sign_in(page, "eve@example.com")
    page.goto(path)
    expect(page.get_by_role("alert")).to_contain_text("This invitation is for ada@example.com")
    expect(page.get_by_role("button", name="Accept invitation")).to_have_count(0)
    assert not Membership.select().where(Membership.workspace == other).exists()


def test_a_reset_by_email_sets_a_new_password_once(page: Page, live):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner", "Ada")
    page.goto("/")
    page.get_by_role("link", name="Forgotten your password?").click()
    page.get_by_role("textbox", name="Email").fill("ada@example.com")
    page.get_by_role("button", name="Send reset link").click()
    expect(page.get_by_role("status")).to_contain_text("on its way")
    assert run_queued_mail() == 1  # the worker's part
    (mail,) = [m for m in InboxMessage.select() if m.to == ["ada@example.com"]]
    link = re.search(r"http://\S+/reset/\S+", mail.text).group(0)
    page.goto(link)
    page.get_by_role("textbox", name="Password").fill("short")
    page.get_by_role("button", name="Set password").click()
    expect(page.get_by_role("textbox", name="Password")).to_have_attribute("aria-invalid", "true")
    page.get_by_role("textbox", name="Password").fill("a brand new password")
    page.get_by_role("button", name="Set password").click()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    page.goto(link)
    expect(page.get_by_role("alert")).to_contain_text("already been used")
    page.context.clear_cookies()
    sign_in(page, "ada@example.com", "a brand new password")


def test_an_unknown_address_gets_the_same_answer_and_no_mail(page: Page, live):
    page.goto("/reset")
    page.get_by_role("textbox", name="Email").fill("nobody@example.com")
    page.get_by_role("button", name="Send reset link").click()
    expect(page.get_by_role("status")).to_contain_text("on its way")
    assert run_queued_mail() == 1  # the same job as for an account: it finds none
    assert InboxMessage.select().count() == 0
