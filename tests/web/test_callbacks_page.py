"""Settings > Callbacks in Chromium: an Admin saves a callback URL (one that breaks spec 6.1
is refused with its rule, the field marked), sends a test event to the HTTPS receiver and
sees the attempts with their answer codes, replays a failed one; a Member cannot change
the URL (403)."""

from __future__ import annotations

import requests
from playwright.sync_api import Page, expect

from engine.store.callback_models import Callback
from engine.store.models import Workspace
from tests import factories
from tests.support.https_receiver import Scripted
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
    assert send_callbacks(str(ws.id)) == "1"
    (caught,) = requests.get(f"{live.url}/dev/inbox/webhooks/callbacks", timeout=10).json()
    assert caught["signatureVerified"] is True, caught["verdict"]
    assert caught["verdict"] == "signature verifies"
    assert (caught["workspaceId"], caught["notificationId"]) == (str(ws.id), str(n.id))
    assert Callback.get().status == "delivered"
