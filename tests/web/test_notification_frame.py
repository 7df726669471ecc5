"""A notification's page in Reports shows the rendered message in a sandboxed frame beside
its text part (docs/web.md, "Reports"), in Chromium."""

from __future__ import annotations

import requests
from playwright.sync_api import Page, expect

from tests import factories
from tests.web.axe import violations
from tests.web.conftest import make_user, sign_in

HTML = ("<!DOCTYPE html><html><head></head><body><p>Hello <b>Ada</b></p>"
        "<script>parent.document.title='owned'</script></body></html>")


def test_the_rendered_message_is_in_a_sandboxed_frame_beside_its_text(page: Page, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    n = factories.notification(ws, factories.email_payload(html=HTML, text="Hello Ada, text"))
    sign_in(page, "mia@example.com", start=f"/w/{ws.id}/reports/notifications/{n.id}")
    frame = page.get_by_title("Rendered message")
    expect(frame).to_have_attribute("sandbox", "")
    expect(page.frame_locator("iframe[title='Rendered message']").get_by_text("Hello")
           ).to_contain_text("Hello Ada")
    expect(page.get_by_role("region", name="Message")).to_contain_text("Hello Ada, text")
    # The document is never in the page, and no script of it runs.
    assert "<b>Ada</b>" not in page.content()
    expect(page).not_to_have_title("owned")
    source = frame.get_attribute("src")
    answer = page.request.get(source)
    assert answer.status == 200
    assert "sandbox" in answer.headers["content-security-policy"]
    assert "script-src" not in answer.headers["content-security-policy"]
    assert answer.headers["x-frame-options"] == "SAMEORIGIN"
    # Signed out, the frame's address shows nothing.
    assert "Hello" not in requests.get(live.url + source, timeout=10,
                                       allow_redirects=False).text
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 800})
        assert violations(page) == []


def test_a_purged_notification_has_no_frame(page: Page, live):
    import datetime as dt

    from engine.database.models import utcnow
    from engine.retention.purge import purge

    ws = factories.workspace(retention_days=7)
    make_user("mia@example.com", ws, "member", "Mia")
    old = factories.notification(ws, factories.email_payload(html=HTML), status="delivered",
                                 created_at=utcnow() - dt.timedelta(days=9))
    purge(ws.id)
    sign_in(page, "mia@example.com", start=f"/w/{ws.id}/reports/notifications/{old.id}")
    expect(page.get_by_role("main")).to_contain_text("purged")
    expect(page.get_by_title("Rendered message")).to_have_count(0)
    assert page.request.get(
        f"/w/{ws.id}/reports/notifications/{old.id}/message").status == 404
