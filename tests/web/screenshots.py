"""The screenshots in docs/, taken by the tests' browser: `make screenshots`.

Not collected by `make test` (the name does not start with test_): it writes into docs/.
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect

from engine.catalog import suppressions
from tests import factories
from tests.web.conftest import make_user, sign_in

DOCS = Path(__file__).resolve().parents[2] / "docs" / "images"


def test_take_the_screenshots(page: Page, live):
    account = factories.account(name="Acme", webhook_delivery=True)
    ws = factories.workspace(account)
    ws.name = "Production"
    ws.save()
    make_user("ada@acme.example", ws, "owner", "Ada Lovelace")
    factories.api_key(ws, "backend")
    factories.api_key(ws, "nightly-import")
    suppressions.add(ws.id, ["bounced@example.net", "left@example.org"], "bounce")
    page.set_viewport_size({"width": 1200, "height": 760})
    sign_in(page, "ada@acme.example")
    page.goto(f"/w/{ws.id}/settings/api-keys")
    page.get_by_role("textbox", name="Name").fill("billing-service")
    page.get_by_role("button", name="Create API key").click()
    expect(page.get_by_role("textbox", name="New API key")).to_be_visible()
    DOCS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(DOCS / "web-api-keys.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/w/{ws.id}/settings/members")
    page.get_by_role("textbox", name="Email").fill("grace@acme.example")
    page.get_by_role("button", name="Send invitation").click()
    expect(page.get_by_role("textbox", name="Invitation link")).to_be_visible()
    page.screenshot(path=str(DOCS / "web-members-phone.png"), full_page=False)
    assert (DOCS / "web-api-keys.png").stat().st_size > 10_000
