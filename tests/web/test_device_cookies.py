"""A stranger's guesses cannot hold an account's owner out (OWASP's device cookies): real
HTTP requests to the live server from several loopback source addresses, as the attack
came from two of its own. docs/web.md, "Security decisions"."""

from __future__ import annotations

import re

import pytest
import requests
from requests.adapters import HTTPAdapter

from tests import factories
from tests.web.conftest import PASSWORD, make_user
from web import devices, throttle

OWNER_AT, GUESSERS, NEW_DEVICE = "127.0.0.2", ("127.0.0.3", "127.0.0.4"), "127.0.0.5"


class _From(HTTPAdapter):
    """Connections from one loopback source address (the server sees it as the client IP)."""

    def __init__(self, source: str) -> None:
        self.source = source
        super().__init__()

    def init_poolmanager(self, *args, **kwargs):
        kwargs["source_address"] = (self.source, 0)
        return super().init_poolmanager(*args, **kwargs)


class Client:
    """A browser without JavaScript at one source address, with its own cookie jar."""

    def __init__(self, base: str, source: str) -> None:
        self.base = base
        self.http = requests.Session()
        self.http.mount("http://", _From(source))

    def sign_in(self, email: str, password: str = PASSWORD) -> requests.Response:
        page = self.http.get(self.base + "/", timeout=30).text
        token = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page).group(1)
        return self.http.post(self.base + "/", timeout=30, allow_redirects=False,
                              data={"csrf_token": token, "email": email, "password": password})

    def sign_out(self) -> None:
        page = self.http.get(self.base + "/account", timeout=30).text
        token = re.search(r'"X-CSRFToken": "([^"]+)"', page).group(1)
        self.http.post(self.base + "/sign-out", data={"csrf_token": token}, timeout=30)


@pytest.fixture
def owner(live):
    make_user("ada@example.com", factories.workspace(), "owner", "Ada")
    return "ada@example.com"


def _guess_until_delayed(live, address: str) -> None:
    guessers = [Client(live.url, source) for source in GUESSERS]
    answers = [guessers[i % 2].sign_in(address, f"guess number {i}").status_code
               for i in range(throttle.FREE_FAILURES + 4)]
    assert answers[:throttle.FREE_FAILURES] == [400] * throttle.FREE_FAILURES
    assert answers[-1] == 429


def test_a_browser_signed_in_before_is_not_held_by_a_strangers_guesses(live, owner,
                                                                       windows_held):
    device = Client(live.url, OWNER_AT)
    assert device.sign_in(owner).status_code == 302
    assert devices.COOKIE in device.http.cookies
    device.sign_out()
    _guess_until_delayed(live, owner)
    # The clock is held: the delay has not passed, yet the owner's browser signs in.
    assert device.sign_in(owner).status_code == 302
    # A new device, even with the right password, still waits: the wait tells nothing.
    waited = Client(live.url, NEW_DEVICE).sign_in(owner)
    assert waited.status_code == 429
    assert int(waited.headers["Retry-After"]) <= throttle.MAX_DELAY + 1


def test_a_device_cookie_is_its_persons_only_and_cannot_be_forged(live, owner, windows_held):
    make_user("eve@example.com", factories.workspace(), "owner", "Eve")
    stranger = Client(live.url, GUESSERS[0])
    assert stranger.sign_in("eve@example.com").status_code == 302  # their own account
    stranger.sign_out()
    _guess_until_delayed(live, owner)
    # The stranger's own device cookie names Eve: Ada's delay holds it.
    assert stranger.sign_in(owner).status_code == 429
    forged = Client(live.url, GUESSERS[1])
    forged.http.cookies.set(devices.COOKIE, stranger.http.cookies[devices.COOKIE] + "x")
    assert forged.sign_in(owner).status_code == 429


def test_a_device_that_keeps_failing_loses_its_pass(live, owner, windows_held):
    device = Client(live.url, OWNER_AT)
    assert device.sign_in(owner).status_code == 302
    device.sign_out()
    _guess_until_delayed(live, owner)
    # A stolen laptop's cookie is no licence to guess: its own failures are counted, and
    # past them the device waits with everyone else.
    answers = [device.sign_in(owner, f"wrong {i}").status_code
               for i in range(devices.FAILURES)]
    assert answers == [400] * devices.FAILURES
    assert device.sign_in(owner).status_code == 429
