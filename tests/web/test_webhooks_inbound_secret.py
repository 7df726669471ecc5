"""Settings > Webhooks: an Owner or Admin rotates the workspace's inbound secret for a
provider (one action per provider that brings events per workspace) in Chromium
(confirmed, shown once, audit-logged without its value) and the real app refuses the
previous URL at once; a Member cannot rotate it (403)."""

from __future__ import annotations

import requests
from playwright.sync_api import Page, expect

from engine.database.models.people import AuditEvent
from engine.database.models.reports import NotificationEvent
from engine.inbound import workspace_secrets
from tests import factories
from tests.engine.inbound.test_postmark_webhooks import bounce
from tests.web.conftest import csrf_token, make_user, sign_in


def _deliver(live, ws_id, password: str) -> requests.Response:
    return requests.post(f"{live.url}/api/inbound/postmark/{ws_id}", timeout=10,
                         json=bounce("0a1b2c3d-0000-4000-8000-000000000000"),
                         auth=("herald", password))


def test_webhooks_page_rotates_the_postmark_secret_once_confirmed(page: Page, live):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "admin", "Ada")
    old = workspace_secrets.secret(ws.id, "postmark")
    assert _deliver(live, ws.id, old).status_code == 200
    sign_in(page, "ada@example.com")
    page.goto(f"/w/{ws.id}/settings/webhooks")
    page.get_by_role("button", name="Rotate Postmark secret").click()
    page.get_by_role("link", name="Cancel").click()  # the confirmation's way out
    assert workspace_secrets.secret(ws.id, "postmark") == old
    page.get_by_role("button", name="Rotate Postmark secret").click()
    expect(page.get_by_role("heading", name="Rotate the Postmark secret?")).to_be_visible()
    page.get_by_role("button", name="Rotate Postmark secret").click()
    url = page.get_by_role("textbox", name="New Postmark webhook URL").input_value()
    new = workspace_secrets.secret(ws.id, "postmark")
    assert new != old and url == f"{live.url.replace('://', f'://herald:{new}@')}" \
        f"/api/inbound/postmark/{ws.id}"
    refused = _deliver(live, ws.id, old)
    assert refused.status_code == 403 and NotificationEvent.select().count() == 0
    assert _deliver(live, ws.id, new).json() == {"recorded": False}  # unknown message
    page.get_by_role("link", name="Audit log").click()
    expect(page.get_by_role("row").nth(1)).to_contain_text("Inbound secret rotated")
    expect(page.get_by_role("row").nth(1)).to_contain_text("Postmark")
    expect(page.get_by_role("row").nth(1)).to_contain_text("ada@example.com")
    assert new not in page.content()
    page.goto(f"/w/{ws.id}/settings/webhooks")  # shown once: not on the next visit
    expect(page.get_by_role("textbox", name="New Postmark webhook URL")).to_have_count(0)
    expect(page.get_by_role("button", name="Rotate Postmark secret")).to_be_visible()


def test_a_member_cannot_rotate_the_postmark_webhook_secret(page: Page, live):
    ws = factories.workspace()
    make_user("max@example.com", ws, "member", "Max")
    before = workspace_secrets.secret(ws.id, "postmark")
    sign_in(page, "max@example.com")
    page.goto(f"/w/{ws.id}/settings/webhooks")
    expect(page.get_by_text("An Owner or Admin can rotate the Postmark secret.")).to_be_visible()
    expect(page.get_by_role("button", name="Rotate Postmark secret")).to_have_count(0)
    assert page.goto(f"/w/{ws.id}/settings/webhooks/inbound/postmark/rotate").status == 403
    refused = page.request.post(f"/w/{ws.id}/settings/webhooks/inbound/postmark/rotate",
                                form={"csrf_token": csrf_token(page)})
    assert refused.status == 403
    assert workspace_secrets.secret(ws.id, "postmark") == before
    assert not AuditEvent.select().where(AuditEvent.action == "inbound_secret.rotated").exists()


def test_a_provider_name_no_plugin_brings_events_under_is_404(page: Page, live):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "admin", "Ada")
    sign_in(page, "ada@example.com")
    for name in ("twilio", "nobody"):
        assert page.goto(f"/w/{ws.id}/settings/webhooks/inbound/{name}/rotate").status == 404


def test_an_installed_provider_with_events_gets_its_own_rotation(page: Page, live,
                                                                 example_package,
                                                                 plugins_from):
    """A provider package installed beside Herald, with only its entry point, is listed
    under Webhooks as a built-in is; rotating its secret leaves Postmark's alone."""
    plugins_from(example_package("herald-provider-example"))
    ws = factories.workspace()
    make_user("ada@example.com", ws, "admin", "Ada")
    postmark_secret = workspace_secrets.secret(ws.id, "postmark")
    old = workspace_secrets.secret(ws.id, "example-log")
    sign_in(page, "ada@example.com")
    page.goto(f"/w/{ws.id}/settings/webhooks")
    expect(page.get_by_role("heading", name="Example log webhook")).to_be_visible()
    expect(page.get_by_role("heading", name="Postmark webhook")).to_be_visible()
    page.get_by_role("button", name="Rotate Example log secret").click()
    page.get_by_role("button", name="Rotate Example log secret").click()
    url = page.get_by_role("textbox", name="New Example log webhook URL").input_value()
    new = workspace_secrets.secret(ws.id, "example-log")
    assert new != old and url.endswith(f"/api/inbound/example-log/{ws.id}") and new in url
    assert workspace_secrets.secret(ws.id, "postmark") == postmark_secret
    body = {"messageId": "<nobody@example>", "event": "bounced"}
    refused = requests.post(f"{live.url}/api/inbound/example-log/{ws.id}", json=body,
                            auth=("herald", old), timeout=10)
    assert refused.status_code == 403
    accepted = requests.post(f"{live.url}/api/inbound/example-log/{ws.id}", json=body,
                             auth=("herald", new), timeout=10)
    assert accepted.json() == {"recorded": False}  # authenticated; no such message
