"""The Email provider page's separate fields (docs/web.md, "Settings, Email provider"): a
password holding `@ / #` works, and a refused form keeps it without showing it, in Chromium."""

from __future__ import annotations

import json

from playwright.sync_api import Page, expect

from engine.database.models import Workspace
from engine.queue.embedded_redis import free_port
from tests import factories
from tests.support.smtp_server import start_smtp
from tests.web.axe import violations
from tests.web.conftest import make_user, sign_in

PASSWORD = "p@ss/w#rd:%20?"


def _admin(page: Page):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner", "Ada")
    sign_in(page, "ada@example.com")
    return ws


def test_separate_fields_take_a_password_with_at_slash_and_hash(page: Page, live):
    controller, smtp = start_smtp(free_port(), auth=("ops@example.org", PASSWORD))
    try:
        ws = _admin(page)
        page.goto(f"/w/{ws.id}/settings/email-provider")
        # The page says which one wins when both are filled.
        expect(page.get_by_text("When Host is filled, these fields are used")).to_be_visible()
        page.get_by_role("textbox", name="Host").fill("127.0.0.1")
        page.get_by_role("textbox", name="Port").fill("not a port")
        page.get_by_role("textbox", name="User name").fill("ops@example.org")
        page.get_by_label("Password", exact=True).fill(PASSWORD)
        page.get_by_role("combobox", name="TLS").select_option("none")
        # Left aside while Host is filled, and never echoed either.
        page.get_by_role("textbox", name="Provider URL").fill(
            "smtp://u:hunter2secret@other.example:25")
        page.get_by_role("button", name="Save").click()
        port = page.get_by_role("textbox", name="Port")
        expect(port).to_have_attribute("aria-invalid", "true")
        expect(page.get_by_role("alert")).to_contain_text("Enter the port")
        # The host is not blamed, the password is neither echoed nor asked for again.
        expect(page.get_by_role("textbox", name="Host")).not_to_have_attribute(
            "aria-invalid", "true")
        expect(page.get_by_label("Password", exact=True)).to_have_value("")
        expect(page.get_by_text("The password you typed is kept")).to_be_visible()
        for secret in (PASSWORD, "p@ss", "hunter2secret"):
            assert secret not in page.content()
        assert Workspace.get_by_id(ws.id).email_provider is None
        for width in (1280, 375):
            page.set_viewport_size({"width": width, "height": 800})
            assert violations(page) == []
        page.set_viewport_size({"width": 1280, "height": 800})
        port.fill(str(controller.port))
        page.get_by_role("textbox", name="Provider URL").fill("")
        page.get_by_role("button", name="Save").click()
        expect(page.get_by_role("status")).to_contain_text(
            f"Saved: this workspace's email goes through smtp://127.0.0.1:{controller.port}")
        stored = json.loads(Workspace.get_by_id(ws.id).email_provider)
        assert stored["plugin"] == "smtp"
        assert PASSWORD not in stored["url"]  # percent-encoded in the URL
        # The real server takes the login with that password.
        page.get_by_role("textbox", name="Test recipient").fill("check@example.org")
        page.get_by_role("button", name="Send test").click()
        expect(page.get_by_role("heading", name="The provider accepted the message")
               ).to_be_visible()
        (arrived,) = smtp.received
        assert arrived.rcpt_tos == ["check@example.org"]
    finally:
        controller.stop()


def test_a_refused_provider_url_keeps_its_password_sealed(page: Page, live):
    ws = _admin(page)
    page.goto(f"/w/{ws.id}/settings/email-provider")
    url = page.get_by_role("textbox", name="Provider URL")
    url.fill("smtp://ops:hunter2secret@mail.example.com:587?tls=bogus")
    page.get_by_role("button", name="Save").click()
    expect(url).to_have_attribute("aria-invalid", "true")
    expect(url).to_have_value("smtp://ops:***@mail.example.com:587?tls=bogus")
    assert "hunter2secret" not in page.content()
    # Only the mistake is corrected: the masked password stands for the one typed.
    url.fill("smtp://ops:***@mail.example.com:587?tls=starttls")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_contain_text("Saved")
    stored = json.loads(Workspace.get_by_id(ws.id).email_provider)
    assert stored["url"] == "smtp://ops:hunter2secret@mail.example.com:587?tls=starttls"
