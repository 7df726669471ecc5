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


def test_take_the_editor_screenshot(page: Page, live):
    from engine.authoring import hierarchy, samples

    ws = factories.workspace(factories.account(name="Acme"))
    make_user("ada@acme.example", ws, "member", "Ada Lovelace")
    project = hierarchy.create_project(ws, "Onboarding")
    folder = hierarchy.create_folder(project, None, "Emails")
    template = hierarchy.create_template(project, folder, "Welcome", "email")
    hierarchy.set_defaults(project, {"bcc": ["audit@example.com"]})
    samples.remember(template, {"name": "Ada", "plan": "Pro"})
    page.set_viewport_size({"width": 1400, "height": 1000})
    sign_in(page, "ada@acme.example")
    page.goto(f"/w/{ws.id}/templates/{template.id}")
    page.get_by_role("textbox", name="Subject").fill("Welcome to Acme, {{name}}")
    body = page.get_by_role("textbox", name="Body", exact=True)
    body.focus()
    page.keyboard.insert_text('<h1 style="font-family:sans-serif">Hello {{name}}</h1>\n'
                              "<p>Your {{plan}} plan is ready.</p>\n"
                              "{{#if coupon}}<p>Use {{coupon}} at checkout.</p>{{/if}}\n")
    page.get_by_role("textbox", name="From address").fill("hello@example.com")
    page.get_by_role("textbox", name="From name").fill("Acme")
    expect(page.get_by_role("status")).to_have_text("Saved")
    frame = page.frame_locator('iframe[title="Preview"]')
    expect(frame.get_by_role("heading", name="Hello Ada")).to_be_visible()
    page.screenshot(path=str(DOCS / "web-editor.png"), clip={"x": 0, "y": 0, "width": 1400,
                                                             "height": 1000})
    assert (DOCS / "web-editor.png").stat().st_size > 10_000


def test_take_the_first_day_screenshots(page: Page, live):
    """What issue 40 added, as a new author and admin see it."""
    from engine.authoring import hierarchy, samples
    from tests.web.test_reports_page import mixed_run

    account = factories.account(name="Acme", webhook_delivery=True)
    ws = factories.workspace(account)
    ws.name = "Production"
    ws.save()
    make_user("ada@acme.example", ws, "owner", "Ada Lovelace")
    make_user("grace@acme.example", ws, "member", "Grace Hopper")
    factories.api_key(ws, "backend")
    suppressions.add(ws.id, ["bounced@example.net"], "bounce")
    run, made = mixed_run(ws)
    run.sent("suppressed", to=("left@example.net",))
    project = hierarchy.create_project(ws, "Onboarding")
    sms = hierarchy.create_template(project, None, "Sign-in code", "sms")
    samples.remember(sms, {"code": "483920"})
    DOCS.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1200, "height": 800})
    sign_in(page, "ada@acme.example")

    page.goto(f"/w/{ws.id}/templates/{sms.id}")
    body = page.get_by_role("textbox", name="Body", exact=True)
    body.focus()
    page.keyboard.insert_text("Your Acme sign-in code is {{code}}. It works for 10 minutes. "
                              "Never share it: Acme staff will never ask you for it. If you "
                              "did not try to sign in, reset your password now.")
    expect(page.get_by_role("status")).to_have_text("Saved")
    expect(page.locator("#preview-note")).to_contain_text("2 text messages")
    box = page.locator(".workbench").bounding_box()
    page.screenshot(path=str(DOCS / "web-sms-length.png"), full_page=True,
                    clip={"x": 0, "y": box["y"] - 10, "width": 1200, "height": box["height"] + 20})

    page.goto(f"/w/{ws.id}/settings/")
    expect(page.get_by_role("table", name="This workspace at a glance")).to_be_visible()
    page.screenshot(path=str(DOCS / "web-settings-summary.png"), full_page=True)

    page.goto(f"/w/{ws.id}/settings/api-keys")
    page.get_by_role("textbox", name="Name").fill("billing-service")
    page.get_by_role("button", name="Create API key").click()
    expect(page.get_by_role("button", name="Copy API key")).to_be_visible()
    page.get_by_role("button", name="Revoke key backend").click()
    page.get_by_role("button", name="Revoke").click()
    expect(page.get_by_text("is revoked")).to_be_visible()  # before a goto cancels the POST
    page.goto(f"/w/{ws.id}/settings/audit-log")
    page.screenshot(path=str(DOCS / "web-audit-log.png"), full_page=True)

    page.goto(f"/w/{ws.id}/reports/")
    page.screenshot(path=str(DOCS / "web-reports-cards.png"),
                    clip={"x": 0, "y": 0, "width": 1200, "height": 800})
    page.goto(f"/w/{ws.id}/reports/notifications/{made['opened'].id}")
    page.screenshot(path=str(DOCS / "web-notification-message.png"), full_page=True)
    for name in ("web-sms-length", "web-settings-summary", "web-audit-log",
                 "web-reports-cards", "web-notification-message"):
        assert (DOCS / f"{name}.png").stat().st_size > 10_000
