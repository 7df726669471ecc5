"""The Email provider page neither reaches a private address nor echoes what a server said
(issue 37, finding 1), and never shows a password back (finding 4)."""

from __future__ import annotations

import json
import time

import pytest
from playwright.sync_api import Page, expect

from engine import runtime
from engine.database.models import Workspace
from tests import factories
from tests.support.recording_listener import RecordingListener
from tests.web.conftest import make_user, sign_in


@pytest.fixture
def listener():
    server = RecordingListener()
    yield server
    server.close()


def _admin(page: Page):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner", "Ada")
    sign_in(page, "ada@example.com")
    return ws


def _strict(live):
    runtime.configure(live.settings.with_changes(webhook_allow_private=False))


def test_a_private_host_is_refused_on_save_and_on_send_test(page: Page, live, listener):
    ws = _admin(page)
    _strict(live)
    try:
        page.goto(f"/w/{ws.id}/settings/email-provider")
        url = page.get_by_role("textbox", name="Provider URL")
        url.fill(f"smtp://ops:hunter2secret@127.0.0.1:{listener.port}?tls=none")
        page.get_by_role("button", name="Save").click()
        expect(url).to_have_attribute("aria-invalid", "true")
        expect(page.get_by_role("alert")).to_contain_text("public addresses only")
        assert Workspace.get_by_id(ws.id).email_provider is None
        assert "hunter2secret" not in page.content()
        expect(url).to_have_value(f"smtp://ops:***@127.0.0.1:{listener.port}?tls=none")
        # Stored before the rule (or by hand): the test send refuses to connect.
        ws.email_provider = json.dumps({"plugin": "smtp",
                                        "url": f"smtp://127.0.0.1:{listener.port}"})
        ws.save()
        page.get_by_role("textbox", name="Test recipient").fill("ops@example.org")
        page.get_by_role("button", name="Send test").click()
        expect(page.get_by_role("heading", name="The provider did not accept the message")
               ).to_be_visible()
        expect(page.get_by_role("status").last).to_contain_text("public addresses only")
        assert listener.connections == []
    finally:
        runtime.configure(live.settings)


def test_a_servers_banner_is_never_echoed(page: Page, live, listener):
    ws = _admin(page)  # private destinations allowed (tests): loopback is reached
    ws.email_provider = json.dumps({"plugin": "smtp",
                                    "url": f"smtp://127.0.0.1:{listener.port}?timeout=5"})
    ws.save()
    page.goto(f"/w/{ws.id}/settings/email-provider")
    page.get_by_role("textbox", name="Test recipient").fill("ops@example.org")
    page.get_by_role("button", name="Send test").click()
    expect(page.get_by_role("heading", name="The provider did not accept the message")
           ).to_be_visible()
    expect(page.get_by_role("status").last).to_contain_text(
        "not an SMTP server, or it refused the session")
    assert len(listener.connections) == 1
    assert "INTERNAL-SECRET" not in page.content() and "OpenSSH" not in page.content()


def test_a_tarpit_provider_holds_no_request_thread(page: Page, live):
    """Issue 37, finding 2: Send test waited on the server in the request (the test server
    here has one thread: /healthz waited too). Now it runs on its own pool, one at a time
    per workspace, and the page polls for the answer."""
    tarpit = RecordingListener(hold=True)
    try:
        ws = _admin(page)
        ws.email_provider = json.dumps({"plugin": "smtp",
                                        "url": f"smtp://127.0.0.1:{tarpit.port}?timeout=4"})
        ws.save()
        page.goto(f"/w/{ws.id}/settings/email-provider")
        page.get_by_role("textbox", name="Test recipient").fill("ops@example.org")
        page.get_by_role("button", name="Send test").click()
        expect(page.get_by_role("heading", name="Sending the test message…")).to_be_visible()
        assert page.request.get("/healthz").status == 200  # answered while the test waits
        # A second test of the same workspace while the first runs: refused, said why.
        page.get_by_role("button", name="Send test").click()
        expect(page.get_by_role("alert")).to_contain_text("still running")
        assert len(tarpit.connections) == 1
        page.goto(f"/w/{ws.id}/settings/email-provider")
        page.get_by_role("textbox", name="Test recipient").fill("ops@example.org")
        deadline = time.monotonic() + 20
        while True:  # the first test ends at its timeout; then the next may start
            page.get_by_role("button", name="Send test").click()
            if page.get_by_role("heading", name="Sending the test message…").count():
                break
            assert time.monotonic() < deadline, "the workspace's slot never freed"
            page.wait_for_timeout(250)
        expect(page.get_by_role("heading", name="The provider did not accept the message")
               ).to_be_visible(timeout=15_000)
        expect(page.get_by_role("status").last).to_contain_text("timed out")
    finally:
        tarpit.close()
