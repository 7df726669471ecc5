"""A person whose workspace requires two-factor sign-in keeps their last second factor:
neither turning the app off nor removing the last passkey goes through (docs/web.md,
"Security decisions", Passkeys). Request by request, Flask's client."""

from __future__ import annotations

import time

import pyotp

from cli.app import create_app
from engine.database.models.people import Passkey
from engine.people import two_factor
from tests import factories
from tests.web.conftest import PASSWORD, make_user
from tests.web.test_account_findings import Browser


def _with_app(settings):
    app = create_app(settings)
    ws = factories.workspace()
    ada = make_user("ada@example.com", ws, "owner", "Ada")
    secret = two_factor.begin(ada)
    recovery = two_factor.confirm(ada, pyotp.TOTP(secret).at(time.time() - 30))
    browser = Browser(app)
    browser.sign_in("ada@example.com")
    browser.post("/sign-in/code", {"code": pyotp.TOTP(secret).now()}, token_from="/sign-in/code")
    assert browser.signed_in()
    return ws, ada, recovery, browser


def test_the_app_stays_on_where_two_factor_is_required(settings):
    ws, ada, recovery, browser = _with_app(settings)
    two_factor.require(ws, True, ada)
    off = {"password": PASSWORD, "code": recovery[0]}
    answer = browser.post("/account/two-factor/off", off, token_from="/account")
    assert answer.status_code in (400, 409)
    assert "requires two-factor authentication" in answer.text
    assert two_factor.enabled(ada)
    # Another second factor first, and then the app may go.
    Passkey.create(user=ada, name="Key", credential_id="AAEC", public_key=b"\x01")
    off["code"] = recovery[1]
    assert browser.post("/account/two-factor/off", off, token_from="/account"
                        ).status_code in (302, 303)
    assert not two_factor.enabled(ada)
    answer = browser.post(f"/account/passkeys/{Passkey.get().id}/remove", token_from="/account")
    assert Passkey.select().count() == 1  # the last one stays
    assert "requires two-factor authentication" in browser.get("/account").text
