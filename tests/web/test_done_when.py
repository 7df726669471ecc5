"""Issue 24's "Done when", end to end in Chromium: a person invited by `herald users invite`
signs in, creates an API key the API accepts, revokes it, rotates the webhook secret (a
delivery verifies with the new one, not the old), adds a suppression the next send honours,
and invites a Member who cannot do the Owner's or Admin's part."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import requests
from playwright.sync_api import Browser, Page, expect

from engine.database.models import Notification, Workspace
from engine.database.models.inbox import InboxMessage
from engine.delivery.jobs import deliver_notification
from engine.webhooks.signatures import verify_webhook
from tests import factories
from tests.conftest import TEST_SECRET_KEY
from tests.web.conftest import PASSWORD, csrf_token, invitation_path


def _herald(live, *args: str) -> dict:
    env = {**os.environ, "HERALD_ENV": "test", "HERALD_DATABASE_URL": live.settings.database_url,
           "HERALD_REDIS_URL": live.settings.redis_url, "HERALD_SECRET_KEY": TEST_SECRET_KEY,
           "HERALD_PUBLIC_URL": live.url}
    proc = subprocess.run([sys.executable, "-m", "cli", *args], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _send(live, key: str, body: dict) -> requests.Response:
    return requests.post(f"{live.url}/api/v1/notifications/send", json=body,
                         headers={"X-Api-Key": key}, timeout=10)


def _delivered(correlation_id: str) -> Notification:
    row = Notification.get(Notification.correlation_id == correlation_id)
    deliver_notification(str(row.id))
    return Notification.get_by_id(row.id)


def _create_key(page: Page, name: str) -> str:
    page.get_by_role("link", name="API keys").click()
    page.get_by_role("textbox", name="Name").fill(name)
    page.get_by_role("button", name="Create API key").click()
    value = page.get_by_role("textbox", name="New API key")
    expect(value).to_have_attribute("readonly", "")
    return value.input_value()


def test_done_when(page: Page, browser: Browser, live, receiver, ca_file, monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", ca_file)
    ws = factories.workspace(factories.account(webhook_delivery=True))
    email = factories.template(ws)
    hook = factories.template(ws, channel="webhook")
    invited = _herald(live, "users", "invite", "lead@example.com", "--workspace", str(ws.id),
                      "--role", "owner")
    assert (invited["email"], invited["workspaceId"], invited["role"]) == (
        "lead@example.com", str(ws.id), "owner")

    page.goto(invited["url"])
    page.get_by_role("textbox", name="Name").fill("Lea")
    page.get_by_role("textbox", name="Password").fill(PASSWORD)
    page.get_by_role("button", name="Accept invitation").click()
    page.get_by_role("link", name="Settings").click()

    # An API key the API accepts at once, then refuses once revoked.
    key = _create_key(page, "backend")
    check = requests.get(f"{live.url}/api/v1/api-keys/validate", headers={"X-Api-Key": key},
                         timeout=10).json()
    assert (check["isValid"], check["status"], check["name"]) == (True, "active", "backend")
    send_email = {"tenantId": str(ws.id), "templateId": str(email.id),
                  "tags": [{"key": "name", "value": "Ada"}],
                  "emailOptions": {"to": ["ada@example.net"]}}
    assert _send(live, key, send_email).status_code == 202
    page.get_by_role("row", name="backend").get_by_role("button", name="Revoke").click()
    page.get_by_role("button", name="Revoke").click()
    expect(page.get_by_role("row", name="backend")).to_contain_text("revoked")
    deadline = time.monotonic() + 10
    while _send(live, key, send_email).status_code != 401:
        assert time.monotonic() < deadline, "the revoked key still sends after 10 s"
        time.sleep(0.2)

    # The rotated secret signs the next delivery; the old one no longer verifies it.
    old = Workspace.get_by_id(ws.id).signing_secret
    page.get_by_role("link", name="Webhooks").click()
    page.get_by_role("button", name="Rotate signing secret").click()
    page.get_by_role("button", name="Rotate signing secret").click()
    new = page.get_by_role("textbox", name="New signing secret").input_value()
    assert new.startswith("whsec_") and new != old
    key = _create_key(page, "sender")
    sent = _send(live, key, {"tenantId": str(ws.id), "templateId": str(hook.id),
                             "tags": [{"key": "id", "value": "42"}],
                             "webhookOptions": {"urlOverride": receiver.url("/hook", "localhost")}})
    assert sent.status_code == 202, sent.text
    assert _delivered(sent.json()["correlationId"]).status == "delivered"
    (request,) = receiver.received
    assert verify_webhook(new, request.body, request.headers)
    assert not verify_webhook(old, request.body, request.headers)

    # A suppression the next send honours.
    page.get_by_role("link", name="Suppressions").click()
    page.get_by_role("textbox", name="Email address").fill("Blocked@Example.net")
    page.get_by_role("button", name="Add suppression").click()
    expect(page.get_by_role("row", name="blocked@example.net")).to_contain_text("manual")
    sent = _send(live, key, {**send_email, "emailOptions": {"to": ["blocked@example.net"]}})
    assert sent.status_code == 202, sent.text
    assert _delivered(sent.json()["correlationId"]).status == "suppressed"
    assert not [m for m in InboxMessage.select() if "blocked@example.net" in m.to]

    # A Member, invited here, cannot do the Owner's or Admin's part.
    page.get_by_role("link", name="Members").click()
    page.get_by_role("textbox", name="Email").fill("member@example.com")
    page.get_by_role("combobox", name="Role").select_option(label="Member")
    page.get_by_role("button", name="Send invitation").click()
    link = invitation_path(page)
    member = browser.new_context(base_url=live.url).new_page()
    member.goto(link)
    member.get_by_role("textbox", name="Name").fill("Max")
    member.get_by_role("textbox", name="Password").fill(PASSWORD)
    member.get_by_role("button", name="Accept invitation").click()
    member.get_by_role("link", name="Settings").click()
    expect(member.get_by_role("link", name="Members")).to_be_visible()
    expect(member.get_by_role("link", name="API keys")).to_have_count(0)
    member.get_by_role("link", name="Webhooks").click()
    expect(member.get_by_role("button", name="Rotate signing secret")).to_have_count(0)
    for path in ("settings/api-keys", "settings/suppressions", "settings/webhooks/rotate",
                 "settings/audit-log", "settings/email-provider"):
        assert member.goto(f"/w/{ws.id}/{path}").status == 403, path
    refused = member.request.post(f"/w/{ws.id}/settings/webhooks/rotate",
                                  form={"csrf_token": csrf_token(member)})
    assert refused.status == 403
    assert Workspace.get_by_id(ws.id).signing_secret == new
    member.goto(f"/w/{ws.id}/settings/members")
    expect(member.get_by_role("button", name="Send invitation")).to_have_count(0)
    expect(member.get_by_role("button", name="Change role")).to_have_count(0)
    member.context.close()
