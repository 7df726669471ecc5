"""The second sign-in step request by request: no session before the code, a new one after,
its limits, and a reset link that still asks for the code."""

from __future__ import annotations

import re
import time

import pyotp
import pytest

from engine.database.models.inbox import InboxMessage
from engine.database.models.people import WebSession
from engine.people import two_factor
from tests import factories
from tests.support.queued_mail import run_queued_mail
from tests.web.conftest import make_user
from tests.web.test_account_findings import Browser
from web import throttle


@pytest.fixture
def totp(settings) -> pyotp.TOTP:
    ada = make_user("ada@example.com", factories.workspace(), "owner", "Ada")
    secret = pyotp.TOTP(two_factor.begin(ada))
    two_factor.confirm(ada, secret.now())
    return secret


def _next_code(totp: pyotp.TOTP) -> str:
    return totp.at(time.time() + totp.interval)


def test_no_session_exists_until_the_code_and_its_id_is_new(production_app, totp):
    browser = Browser(production_app)
    answer = browser.sign_in("ada@example.com")
    assert answer.status_code == 303 and answer.location.endswith("/sign-in/code")
    assert not WebSession.select().exists() and not browser.signed_in()
    assert browser.get("/workspaces").status_code == 302  # not signed in yet
    done = browser.post("/sign-in/code", {"code": _next_code(totp)}, token_from="/sign-in/code")
    assert done.status_code == 302 and browser.signed_in()
    assert WebSession.select().count() == 1


def test_wrong_codes_are_limited_like_passwords(production_app, totp, windows_held):
    browser = Browser(production_app, "203.0.113.50")
    browser.sign_in("ada@example.com")
    codes = []
    for i in range(throttle.FREE_FAILURES + 1):
        answer = browser.post("/sign-in/code", {"code": f"{i:06d}"}, token_from="/sign-in/code")
        codes.append(answer.status_code)
    assert codes[:throttle.FREE_FAILURES] == [400] * throttle.FREE_FAILURES
    assert codes[-1] == 429 and "Try again in" in answer.text
    assert not WebSession.select().exists()


def test_a_reset_link_still_asks_for_the_code(production_app, totp):
    browser = Browser(production_app)
    browser.post("/reset", {"email": "ada@example.com"}, token_from="/reset")
    run_queued_mail()
    token = re.search(r"/reset/(\S+)", InboxMessage.get().text).group(1)
    done = browser.post(f"/reset/{token}", {"password": "a fresh long passphrase"},
                        token_from=f"/reset/{token}")
    assert done.status_code == 303 and done.location.endswith("/sign-in/code")
    assert not WebSession.select().exists() and not browser.signed_in()
    browser.post("/sign-in/code", {"code": _next_code(totp)}, token_from="/sign-in/code")
    assert browser.signed_in()
