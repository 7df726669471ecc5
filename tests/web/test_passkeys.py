"""Passkeys through Chromium's virtual authenticator (the CDP WebAuthn domain): added on the
Account page, used to sign in, removed; and answers the browser would never send, made
here with the authenticator's own key: another origin, a counter that did not rise.
WebAuthn takes no IP address as a relying party, so these pages are served at
http://localhost:<port> (a server of this module's, its public URL on that host)."""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from collections.abc import Iterator

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from playwright.sync_api import Page, expect

from engine.database.models import Workspace
from engine.database.models.people import Passkey
from engine.people import audit, passkeys
from tests import factories
from tests.web.axe import violations
from tests.web.conftest import LiveServer, csrf_token, make_user, serving_app, sign_in


@pytest.fixture(scope="module")
def localhost_server(base_settings, _schema) -> Iterator[LiveServer]:
    with serving_app(base_settings, "localhost") as server:
        yield server


@pytest.fixture
def here(localhost_server: LiveServer, settings) -> LiveServer:
    from engine import runtime

    with localhost_server.gate.held():
        runtime.configure(localhost_server.settings)
    return localhost_server


@pytest.fixture
def authenticator(page: Page) -> tuple[object, str]:
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    made = cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True,
        "hasUserVerification": True, "isUserVerified": True,
        "automaticPresenceSimulation": True}})
    return cdp, made["authenticatorId"]


def _add_passkey(page: Page, here: LiveServer, name: str) -> None:
    page.goto(here.url + "/account")
    page.get_by_role("textbox", name="Passkey name").fill(name)
    page.get_by_role("button", name="Add a passkey").click()
    expect(page.get_by_role("button", name=f"Remove passkey {name}")).to_be_visible()


def test_a_passkey_is_added_signs_in_alone_and_is_removed(page: Page, here, authenticator):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner", "Ada")
    sign_in(page, "ada@example.com", start=here.url + "/")
    _add_passkey(page, here, "Work laptop")
    assert violations(page) == []
    assert [e.action for e in audit.recent(Workspace.get_by_id(ws.id))][:1] == ["passkey.added"]
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("button", name="Sign in with a passkey")).to_be_visible()
    assert violations(page) == []
    # No address, no password: the browser offers the site's passkey (discoverable).
    page.get_by_role("button", name="Sign in with a passkey").click()
    expect(page.get_by_role("heading", name="Templates")).to_be_visible()
    assert Passkey.get().last_used_at is not None
    page.goto(here.url + "/account")
    page.get_by_role("button", name="Remove passkey Work laptop").click()
    expect(page.get_by_text("You have no passkeys.")).to_be_visible()
    assert not Passkey.select().exists()


def test_a_passkey_meets_a_workspaces_two_factor_requirement(page: Page, here, authenticator):
    from engine.database.models.people import User
    from engine.people import two_factor

    ws = factories.workspace()
    user = make_user("ada@example.com", ws, "owner", "Ada")
    sign_in(page, "ada@example.com", start=here.url + "/")
    _add_passkey(page, here, "Phone")
    two_factor.require(ws, True, user)
    page.get_by_role("button", name="Sign out").click()
    # A password alone is led to set up two-factor; a passkey is two factors.
    sign_in(page, "ada@example.com", start=here.url + "/")
    page.goto(f"{here.url}/w/{ws.id}/templates")
    expect(page.get_by_role("heading", name="Your account")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    page.get_by_role("button", name="Sign in with a passkey").click()
    expect(page.get_by_role("heading", name="Templates")).to_be_visible()
    # The last second factor stays while the workspace requires two-factor.
    page.goto(here.url + "/account")
    page.get_by_role("button", name="Remove passkey Phone").click()
    expect(page.get_by_text("requires two-factor authentication").first).to_be_visible()
    assert Passkey.select().where(Passkey.user == User.get_by_id(user.id)).count() == 1


def test_a_member_led_to_set_up_two_factor_may_add_a_passkey(page: Page, here,
                                                              authenticator):
    from engine.people import two_factor

    ws = factories.workspace()
    owner = make_user("owner@example.com", ws, "owner", "Olu")
    make_user("mia@example.com", ws, "member", "Mia")
    two_factor.require(ws, True, owner)
    sign_in(page, "mia@example.com", start=here.url + "/")
    page.goto(f"{here.url}/w/{ws.id}/templates")
    expect(page.get_by_role("heading", name="Your account")).to_be_visible()
    _add_passkey(page, here, "Phone")
    page.goto(f"{here.url}/w/{ws.id}/templates")
    expect(page.get_by_role("heading", name="Templates")).to_be_visible()


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _assertion(page: Page, here: LiveServer, cdp, authenticator_id: str, *, origin: str,
               sign_count: int) -> tuple[int, dict]:
    """Ask the server for a challenge and answer it with the virtual authenticator's own
    key, as an authenticator would at ``origin`` with ``sign_count``."""
    credential = cdp.send("WebAuthn.getCredentials",
                          {"authenticatorId": authenticator_id})["credentials"][0]
    key = serialization.load_der_private_key(base64.b64decode(credential["privateKey"]), None)
    headers = {"X-CSRFToken": csrf_token(page), "Content-Type": "application/json"}
    options = page.context.request.post(here.url + "/sign-in/passkey/options",
                                        headers=headers, data="{}").json()
    client_data = json.dumps({"type": "webauthn.get", "challenge": options["challenge"],
                              "origin": origin, "crossOrigin": False}).encode()
    rp_id, _ = passkeys.relying_party()
    auth_data = hashlib.sha256(rp_id.encode()).digest() + bytes([0x05]) + \
        struct.pack(">I", sign_count)
    signed = auth_data + hashlib.sha256(client_data).digest()
    signature = key.sign(signed, ec.ECDSA(hashes.SHA256())) \
        if isinstance(key, ec.EllipticCurvePrivateKey) else key.sign(signed)
    raw_id = _b64url(base64.b64decode(credential["credentialId"]))
    body = {"credential": {
        "id": raw_id, "rawId": raw_id, "type": "public-key",
        "response": {"clientDataJSON": _b64url(client_data),
                     "authenticatorData": _b64url(auth_data), "signature": _b64url(signature),
                     "userHandle": _b64url(base64.b64decode(credential["userHandle"]))},
        "clientExtensionResults": {}}}
    answer = page.context.request.post(here.url + "/sign-in/passkey", headers=headers,
                                       data=json.dumps(body))
    return answer.status, answer.json()


def test_an_answer_from_another_origin_or_with_a_replayed_counter_is_refused(
        page: Page, here, authenticator):
    cdp, authenticator_id = authenticator
    make_user("ada@example.com", factories.workspace(), "owner", "Ada")
    sign_in(page, "ada@example.com", start=here.url + "/")
    _add_passkey(page, here, "Key")
    page.get_by_role("button", name="Sign out").click()
    page.get_by_role("button", name="Sign in with a passkey").click()
    expect(page.get_by_role("heading", name="Templates")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    count = Passkey.get().sign_count
    assert count > 0
    status, answer = _assertion(page, here, cdp, authenticator_id,
                                origin="http://evil.localhost", sign_count=count + 5)
    assert status == 400 and "origin" in answer["error"].lower()
    status, answer = _assertion(page, here, cdp, authenticator_id, origin=here.url,
                                sign_count=count)
    assert status == 400 and "count" in answer["error"].lower()
    # The same making, right origin and a risen counter, passes: the refusals above were
    # for the origin and the counter, not for how the answer was made.
    status, answer = _assertion(page, here, cdp, authenticator_id, origin=here.url,
                                sign_count=count + 1)
    assert status == 200, answer
    assert Passkey.get().sign_count == count + 1
