"""Browser tests: the real app factory on a loopback port, driven by Debian's Chromium
through Playwright (never a downloaded browser). No Chromium: the tests skip and the
summary says so loudly; under CI=true a missing Chromium fails them."""

from __future__ import annotations

import os
import re
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from werkzeug.serving import WSGIRequestHandler, make_server

from config.settings import Settings

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
PASSWORD = "correct horse battery"
_missing: list[str] = []


def chromium_path() -> str | None:
    for candidate in (os.environ.get("HERALD_CHROMIUM"), shutil.which("chromium"),
                      "/usr/bin/chromium"):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture(scope="session")
def browser_type_launch_args() -> dict:
    path = chromium_path()
    if path is None:
        message = "no Chromium found (apt-get install chromium, or set HERALD_CHROMIUM)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"browser tests cannot run in CI: {message}")
        _missing.append(message)
        pytest.skip(message)
    return {"executable_path": path, "args": CHROMIUM_ARGS, "headless": True}


def pytest_terminal_summary(terminalreporter) -> None:
    if _missing:
        terminalreporter.write_sep("!", "BROWSER TESTS SKIPPED", red=True, bold=True)
        terminalreporter.write_line(f"The web application's browser tests did not run: "
                                    f"{_missing[0]}.", red=True, bold=True)


class RequestGate:
    """The live server's requests, one at a time; ``held`` keeps them out meanwhile.

    A page closed at the end of a test can send one more request (an editor hands its
    unsaved text over as the page goes, a keepalive fetch), which reaches the server while
    the next test empties the database and rebinds the engine. Held, it waits for that and
    then meets the empty database (a 404), instead of racing it ("database is locked")."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    @contextmanager
    def held(self) -> Iterator[None]:
        """Wait for the request in flight, if any, and keep the next ones out meanwhile."""
        with self._lock:
            yield

    request = held  # a request passes alone


class _IdleDroppingHandler(WSGIRequestHandler):
    """werkzeug's handler, its connection's reads bounded by a timeout."""

    timeout = 5  # seconds; no page of the tests waits this long between its bytes


@dataclass
class LiveServer:
    url: str
    settings: Settings
    gate: RequestGate


@contextmanager
def serving_app(base_settings: Settings, host: str = "127.0.0.1") -> Iterator[LiveServer]:
    """The API's app factory, web application included, on a loopback port, its public URL
    at ``host`` (``localhost`` for WebAuthn, which takes no IP address)."""
    from cli.app import create_app
    from engine.database.db import database

    app = None
    gate = RequestGate()

    def wsgi(environ, start_response):
        with gate.request():
            try:
                yield from app(environ, start_response)
            finally:
                # The tests rebind the database between tests: never keep a connection over.
                if not database.is_closed():
                    database.close()

    # One thread takes the connections in the order they came, so a page's requests meet
    # the server in the order the browser made them (with a thread each, the editor's
    # publish test once saw its own autosave as another person's). A connection that sends
    # nothing (a browser's preconnect) is dropped after five seconds instead of holding
    # every other request behind it.
    server = make_server("127.0.0.1", 0, wsgi, threaded=False,
                         request_handler=_IdleDroppingHandler)
    url = f"http://{host}:{server.server_port}"
    server_settings = base_settings.with_changes(public_url=url)
    app = create_app(server_settings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield LiveServer(url, server_settings, gate)
    finally:
        server.shutdown()


@pytest.fixture(scope="session")
def live_app_server(base_settings: Settings, _schema: None) -> Iterator[LiveServer]:
    """One server for the session."""
    with serving_app(base_settings) as server:
        yield server


@pytest.fixture
def live(live_app_server: LiveServer, settings: Settings) -> LiveServer:
    """The server, with an empty database and Redis (the ``settings`` fixture), and the
    engine bound to the server's settings (its public URL) for what tests create."""
    from engine import runtime

    runtime.configure(live_app_server.settings)
    return live_app_server


@pytest.fixture(autouse=True)
def _late_requests_held(request: pytest.FixtureRequest) -> None:
    """A test with the live server gets it (its database emptied, the engine rebound) with
    the server's requests held: first of the test's fixtures, so whatever order it names
    them in, a late request of the test before waits for its new database."""
    if "live" in request.fixturenames:
        with request.getfixturevalue("live_app_server").gate.held():
            request.getfixturevalue("live")


@pytest.fixture
def browser_context_args(browser_context_args: dict, live_app_server: LiveServer) -> dict:
    return {**browser_context_args, "base_url": live_app_server.url}


@pytest.fixture
def app(settings: Settings, app_for):
    """The real app factory's Flask application on the test's database and Redis, for a
    test client or a request context (no server, no browser); one for the session."""
    return app_for(settings)


@pytest.fixture
def production_app(settings: Settings, app_for):
    """As ``app``, with HERALD_ENV=production: the security findings were made there."""
    return app_for(settings.with_changes(env="production"))


def make_user(email: str, workspace, role: str, name: str = "Test Person"):
    """A user with a role in ``workspace``, made through the engine's own services."""
    from engine.people import roles, users

    user = users.find(email) or users.create(email, name, PASSWORD)
    roles.add(workspace, user, role)
    return user


def sign_in(page, email: str, password: str = PASSWORD, start: str = "/") -> None:
    page.goto(start)
    page.get_by_role("textbox", name="Email").fill(email)
    page.get_by_role("textbox", name="Password").fill(password)
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.get_by_role("button", name="Sign out").wait_for()


def csrf_token(page) -> str:
    """The page's CSRF token, as htmx sends it (the body's hx-headers)."""
    headers = page.locator("body").get_attribute("hx-headers") or ""
    return re.search(r'"X-CSRFToken": "([^"]+)"', headers).group(1)


def invitation_path(page) -> str:
    """The path of the link shown in the Members page's `Invitation link` textbox."""
    url = page.get_by_role("textbox", name="Invitation link").input_value()
    return "/" + url.split("/", 3)[3]


def open_editor(page, template) -> None:
    """Opens ``template``'s editor and waits until it can be used: its buttons shown and
    the deferred script that sets up the code editor run."""
    from playwright.sync_api import expect

    page.goto(f"/w/{template.workspace_id}/templates/{template.id}")
    expect(page.get_by_role("button", name="Publish")).to_be_visible()
    page.wait_for_load_state()


def conflicting_tabs(browser, live, template, theirs: str, mine: str):
    """Two tabs signed in as mia@example.com (a member the test made) on ``template``'s
    editor: the first saved ``theirs``, then the second's ``mine`` was refused as a
    conflict. Returns (first, second); the caller closes their contexts."""
    from playwright.sync_api import expect

    from tests.web.authoring_support import replace_text

    first, second = (browser.new_context(base_url=live.url).new_page() for _ in range(2))
    for tab in (first, second):
        sign_in(tab, "mia@example.com")
        open_editor(tab, template)
    replace_text(first, "Body", theirs)
    expect(first.get_by_role("status")).to_have_text("Saved")
    replace_text(second, "Body", mine)
    expect(second.get_by_role("status")).to_have_text(
        "Not saved: this draft was changed elsewhere")
    return first, second
