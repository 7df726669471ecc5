"""Single sign-on through Chromium against a real OpenID provider process on loopback
(oidc-provider-mock, nonces required): a person signs in and out (the provider's logout
too), an invitation is accepted by the sign-in, an unverified or unknown address is refused
and nothing is made; HERALD_OIDC_ONLY takes the password form away."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest
import requests
from playwright.sync_api import Page, expect

from engine import runtime
from engine.database.models import Workspace
from engine.database.models.people import Membership, User
from engine.people import audit, invitations, resets, single_sign_on
from tests import factories
from tests.support.processes import wait_for
from tests.web.axe import violations
from tests.web.conftest import PASSWORD, make_user

PEOPLE = (
    {"sub": "ada", "email": "Ada@Example.com", "email_verified": True, "name": "Ada"},
    {"sub": "newcomer", "email": "new@example.com", "email_verified": True, "name": "Nia"},
    {"sub": "unverified", "email": "ada@example.com", "email_verified": False},
    {"sub": "stranger", "email": "stranger@example.com", "email_verified": True},
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _answers(url: str) -> bool:
    try:
        return requests.get(url + "/.well-known/openid-configuration", timeout=2).ok
    except requests.RequestException:
        return False


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    port = _free_port()
    command = [sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1",
               "--port", str(port), "--require-nonce"]
    for person in PEOPLE:
        command += ["--user-claims", json.dumps(person)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _answers(url) or process.poll() is not None, 60,
                 "the OpenID provider to answer")
        assert process.poll() is None, process.stderr.read().decode()
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def sso(live, provider):
    def configure(**changes):
        with live.gate.held():
            runtime.configure(live.settings.with_changes(
                oidc_issuer=provider, oidc_client_id="herald",
                oidc_client_secret="mock-accepts-any", **changes))
            single_sign_on.forget()

    configure()
    yield configure
    single_sign_on.forget()


def _through_provider(page: Page, subject: str) -> None:
    page.goto("/")
    page.get_by_role("button", name="Sign in with single sign-on").click()
    page.get_by_role("button", name=subject, exact=True).click()


def test_a_person_signs_in_and_out_through_the_provider(page: Page, live, sso, provider):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner", "Ada")
    page.goto("/")
    expect(page.get_by_role("button", name="Sign in with single sign-on")).to_be_visible()
    assert violations(page) == []
    _through_provider(page, "ada")  # the provider says Ada@Example.com: the same address
    expect(page.get_by_role("heading", name="Templates")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    # RP-initiated logout: the provider's end-session page, then back to Herald.
    page.wait_for_url(f"{provider}/oauth2/end_session**")
    assert "id_token_hint=" in page.url and "post_logout_redirect_uri=" in page.url
    page.get_by_role("button", name="End session").click()
    expect(page.get_by_role("button", name="Sign in with single sign-on")).to_be_visible()
    page.goto(f"/w/{ws.id}/templates")
    expect(page.get_by_role("button", name="Sign in", exact=True)).to_be_visible()


def test_a_pending_invitation_is_accepted_by_the_sign_in(page: Page, live, sso):
    ws = factories.workspace()
    owner = make_user("ada@example.com", ws, "owner", "Ada")
    invitations.invite(ws, "new@example.com", "admin", owner, "owner", live.url)
    _through_provider(page, "newcomer")
    expect(page.get_by_role("heading", name="Templates")).to_be_visible()
    joined = User.get(User.email == "new@example.com")
    assert joined.name == "Nia"
    assert Membership.get(Membership.user == joined).role == "admin"
    event = audit.recent(Workspace.get_by_id(ws.id))[0]
    assert (event.action, event.details["via"]) == ("member.joined", "single sign-on")


def test_an_unverified_or_unknown_address_is_refused_and_nothing_made(page: Page, live, sso):
    make_user("ada@example.com", factories.workspace(), "owner", "Ada")
    _through_provider(page, "unverified")
    expect(page.get_by_role("heading", name="Single sign-on did not sign you in")
           ).to_be_visible()
    expect(page.get_by_text("has not verified your email address")).to_be_visible()
    expect(page.get_by_role("button", name="Sign out")).to_have_count(0)
    assert violations(page) == []
    _through_provider(page, "stranger")
    expect(page.get_by_text("No Herald account uses stranger@example.com")).to_be_visible()
    assert not User.select().where(User.email == "stranger@example.com").exists()
    expect(page.get_by_role("button", name="Sign out")).to_have_count(0)


def test_oidc_only_takes_the_password_form_away(page: Page, live, sso):
    sso(oidc_only=True)
    make_user("ada@example.com", factories.workspace(), "owner", "Ada")
    page.goto("/")
    expect(page.get_by_role("button", name="Sign in with single sign-on")).to_be_visible()
    expect(page.get_by_role("textbox", name="Password")).to_have_count(0)
    assert violations(page) == []
    token = page.locator("input[name=csrf_token]").first.get_attribute("value")
    refused = page.request.post("/", form={"csrf_token": token, "email": "ada@example.com",
                                           "password": PASSWORD})
    assert refused.status == 403
    assert page.request.get("/reset").status == 403
    _through_provider(page, "ada")
    expect(page.get_by_role("heading", name="Templates")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    page.get_by_role("button", name="End session").click()
    # The provider down: the operator's link (`herald users reset-password`) still gets in.
    link = resets.issue_for("ada@example.com", live.url, resets.BY_OPERATOR).url
    page.goto(link)
    page.get_by_role("textbox", name="Password").fill("a brand new passphrase here")
    page.get_by_role("button", name="Set password").click()
    expect(page.get_by_role("heading", name="Templates")).to_be_visible()


def test_oidc_only_invitation_is_accepted_through_the_provider(page: Page, live, sso):
    sso(oidc_only=True)
    ws = factories.workspace()
    owner = make_user("ada@example.com", ws, "owner", "Ada")
    issued = invitations.invite(ws, "new@example.com", "member", owner, "owner", live.url)
    page.goto(issued.url)
    expect(page.get_by_role("textbox", name="Password")).to_have_count(0)
    assert violations(page) == []
    page.get_by_role("button", name="Sign in with single sign-on").click()
    page.get_by_role("button", name="newcomer", exact=True).click()
    expect(page.get_by_role("heading", name="Templates")).to_be_visible()
    assert Membership.get(Membership.user == User.get(User.email == "new@example.com")
                          ).workspace_id == ws.id
