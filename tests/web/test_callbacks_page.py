"""Settings > Callbacks in Chromium: an Admin saves a callback URL (one that breaks spec 6.1
is refused with its rule, the field marked), sends a test event to the HTTPS receiver and
sees the attempts with their answer codes, replays a failed one; a Member cannot change
the URL (403)."""

from __future__ import annotations

import threading

import requests
from playwright.sync_api import Page, expect

from engine.database.models import Workspace
from engine.database.models.callbacks import Callback
from tests import factories
from tests.support.https_receiver import Scripted
from tests.support.processes import wait_for
from tests.web.conftest import csrf_token, make_user, sign_in


def test_admin_saves_a_callback_url_and_sees_the_attempts(page: Page, live, receiver,
                                                          ca_file, monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", ca_file)
    ws = factories.workspace()
    make_user("ada@example.com", ws, "admin", "Ada")
    sign_in(page, "ada@example.com")
    page.goto(f"/w/{ws.id}/settings")
    page.get_by_role("link", name="Callbacks").click()
    url_box = page.get_by_role("textbox", name="Callback URL")
    url_box.fill("ftp://example.com/cb")
    page.get_by_role("button", name="Save callback").click()
    expect(url_box).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_role("alert")).to_contain_text("rule: https:// only")
    assert Workspace.get_by_id(ws.id).callback_url is None

    receiver.script["/cb"] = [Scripted(status=404), Scripted(status=200)]
    url_box.fill(receiver.url("/cb", "localhost"))
    page.get_by_role("button", name="Save callback").click()
    expect(page.get_by_role("status")).to_contain_text("Saved")
    assert Workspace.get_by_id(ws.id).callback_url == receiver.url("/cb", "localhost")

    page.get_by_role("button", name="Send test event").click()
    expect(page.get_by_role("status")).to_contain_text("retries stopped")
    table = page.get_by_role("table", name="Recent callback attempts")
    row = table.get_by_role("row").nth(1)
    expect(row).to_contain_text("callback.test")
    expect(row).to_contain_text("failed")
    expect(row).to_contain_text("404")
    row.get_by_role("button", name="Replay").click()
    expect(page.get_by_role("status")).to_contain_text("Replay: delivered (answer 200)")
    expect(table.get_by_role("row").nth(1)).to_contain_text("delivered")
    first, second = receiver.received
    assert first.headers["X-Service-Delivery-Id"] == second.headers["X-Service-Delivery-Id"]

    page.get_by_role("button", name="Remove callback").click()
    expect(page.get_by_role("status")).to_contain_text("No more callbacks")
    assert Workspace.get_by_id(ws.id).callback_url is None


def test_a_member_cannot_change_the_callback_url(page: Page, live):
    ws = factories.workspace(callback_url="https://hook.example.com/cb")
    make_user("max@example.com", ws, "member", "Max")
    sign_in(page, "max@example.com")
    expect(page.get_by_role("link", name="Callbacks")).to_have_count(0)
    assert page.goto(f"/w/{ws.id}/settings/callbacks").status == 403
    token = csrf_token(page)
    for path, form in (("callbacks", {"callback_url": "https://evil.example.com/"}),
                       ("callbacks/remove", {}), ("callbacks/test", {})):
        refused = page.request.post(f"/w/{ws.id}/settings/{path}",
                                    form={"csrf_token": token, **form})
        assert refused.status == 403
    assert Workspace.get_by_id(ws.id).callback_url == "https://hook.example.com/cb"
    assert Callback.select().count() == 0


def test_the_dev_inbox_webhook_catcher_takes_callbacks_with_its_signature_mark(live):
    from engine.callbacks import targets
    from engine.callbacks.jobs import send_callbacks
    from engine.delivery.jobs import deliver_notification

    ws = factories.workspace()
    targets.set_target(ws, f"{live.url}/dev/inbox/webhooks/callbacks")
    n = factories.notification(ws, factories.email_payload())
    assert deliver_notification(str(n.id)) == "delivered"  # through the dev inbox
    assert send_callbacks(str(ws.id)) == 1
    (caught,) = requests.get(f"{live.url}/dev/inbox/webhooks/callbacks", timeout=10).json()
    assert caught["signatureVerified"] is True, caught["verdict"]
    assert caught["verdict"] == "signature verifies"
    assert (caught["workspaceId"], caught["notificationId"]) == (str(ws.id), str(n.id))
    assert Callback.get().status == "delivered"


def _callbacks_admin(page: Page, receiver) -> Workspace:
    from engine.callbacks import targets

    ws = factories.workspace()
    targets.set_target(ws, receiver.url("/cb", "localhost"))
    make_user("ada@example.com", ws, "admin", "Ada")
    sign_in(page, "ada@example.com")
    page.goto(f"/w/{ws.id}/settings/callbacks")
    return ws


def test_a_hanging_receiver_holds_no_request_thread(page: Page, live, receiver, ca_file,
                                                    monkeypatch):
    """Send test event waited for the receiver on the request thread: eight at once held
    every thread for the 10 s timeout, /healthz too. It runs on a pool of its own now, one
    per workspace at a time, and the page polls. (The live server here has one thread: had
    the test held it, /healthz could not answer while the receiver holds the request.)"""
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", ca_file)
    hold = threading.Event()
    receiver.script["/cb"] = [Scripted(status=200, hold=hold)]
    try:
        ws = _callbacks_admin(page, receiver)
        page.get_by_role("button", name="Send test event").click()
        expect(page.get_by_role("heading", name="Sending to the callback URL…")).to_be_visible()
        wait_for(lambda: len(receiver.received) == 1, 10, "the test event at the receiver")
        assert page.request.get("/healthz").status == 200  # while the receiver holds it
        # Another while it runs: refused, and said why; nothing more reaches the receiver.
        page.get_by_role("button", name="Send test event").click()
        expect(page.get_by_role("alert")).to_contain_text("still running")
        assert len(receiver.received) == 1
        assert page.request.get("/healthz").status == 200
    finally:
        hold.set()
    page.goto(f"/w/{ws.id}/settings/callbacks")
    wait_for(lambda: Callback.get().status != "pending", 30, "the test event's answer")
    table = page.get_by_role("table", name="Recent callback attempts")
    expect(table.get_by_role("row").nth(1)).to_contain_text("callback.test")


def test_failed_attempts_can_be_shown_alone(page: Page, live, receiver, ca_file, monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", ca_file)
    receiver.script["/cb"] = [Scripted(status=404), Scripted(status=200)]
    _callbacks_admin(page, receiver)
    for _ in range(2):
        page.get_by_role("button", name="Send test event").click()
        expect(page.get_by_role("status")).to_contain_text("Test event:")
    table = page.get_by_role("table", name="Recent callback attempts")
    expect(table.get_by_role("row")).to_have_count(3)
    page.get_by_role("combobox", name="Show").select_option(label="Failed attempts")
    page.get_by_role("button", name="Filter").click()
    expect(table.get_by_role("row")).to_have_count(2)
    expect(table.get_by_role("row").nth(1)).to_contain_text("404")


def test_the_callbacks_page_reads_well(page: Page, live, receiver, ca_file, monkeypatch):
    """The checkbox beside its label; the hint names the loopback catcher where loopback
    is allowed; the attempts table scrolls by keyboard; axe finds nothing at both widths."""
    from tests.web.axe import violations

    monkeypatch.setenv("REQUESTS_CA_BUNDLE", ca_file)
    receiver.script["/cb"] = [Scripted(status=503, body=b"x" * 400)]
    _callbacks_admin(page, receiver)
    page.get_by_role("button", name="Send test event").click()
    expect(page.get_by_role("status")).to_contain_text("Test event:")
    box = page.get_by_role("checkbox", name="Call back opens and clicks too").bounding_box()
    label = page.get_by_text("Call back opens and clicks too").bounding_box()
    assert abs(box["y"] + box["height"] / 2 - (label["y"] + label["height"] / 2)) < 8
    assert box["x"] < label["x"]
    expect(page.get_by_text("dev/inbox/webhooks/callbacks")).to_be_visible()
    region = page.get_by_role("region", name="Recent callback attempts")
    expect(region).to_have_attribute("tabindex", "0")
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 900})
        assert violations(page) == []  # the answer shown
        page.goto(page.url.rsplit("/", 1)[0] + "?show=failed")
        assert violations(page) == []
        page.goto(page.url.split("?")[0])
        assert violations(page) == []
