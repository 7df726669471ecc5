"""What a new author and a new admin still tripped on, on a second day (docs/web.md), in
Chromium: each finding a test that failed before its fix."""

from __future__ import annotations

import requests
from playwright.sync_api import Page, expect

from tests import factories
from tests.web.axe import violations
from tests.web.conftest import make_user, sign_in


def test_an_unknown_url_is_the_page_not_found_page_for_a_browser(page: Page, live):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner", "Ada")
    sign_in(page, "ada@example.com")
    for path in (f"/w/{ws.id}/no-such-page", "/no-such-page"):
        answer = page.goto(path)
        assert answer.status == 404
        assert answer.headers["content-type"].startswith("text/html")
        assert "script-src 'self'" in answer.headers["content-security-policy"]
        expect(page.get_by_role("heading", name="Page not found")).to_be_visible()
        for width in (1280, 375):
            page.set_viewport_size({"width": width, "height": 800})
            assert violations(page) == []
    # A client that wants JSON, and the API's own paths, still get problem details.
    for path, accept in (("/no-such-page", "application/json"),
                         ("/api/v1/no-such-thing", "text/html,*/*")):
        answer = requests.get(live.url + path, headers={"Accept": accept}, timeout=10)
        assert answer.status_code == 404
        assert answer.headers["Content-Type"] == "application/problem+json"


def test_a_uk_from_number_publishes_and_a_spaced_test_recipient_is_taken(page: Page, live):
    from engine.store.models import InboxMessage
    from tests.web.authoring_support import click_when_ready, replace_text, running_worker
    from tests.web.authoring_support import wait_for as wait_until

    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    template = factories.template(ws, channel="sms", publish_it=False)
    sign_in(page, "mia@example.com")
    page.goto(f"/w/{ws.id}/templates/{template.id}")
    replace_text(page, "Body", "Your code is 123456")
    page.get_by_role("textbox", name="From number").fill("+447700900123")
    expect(page.get_by_role("status")).to_have_text("Saved")
    page.get_by_role("button", name="Publish").click()
    expect(page.get_by_role("status")).to_have_text("Published: version 1 is live")
    with running_worker(live):
        page.get_by_role("textbox", name="Test recipient").fill("+44 7911 123456")
        click_when_ready(page, "Send test")
        expect(page.get_by_text("Test delivered to +447911123456.")).to_be_visible(
            timeout=15_000)
        (sms,) = wait_until(lambda: list(InboxMessage.select()), "the SMS in the inbox")
        assert sms.to == ["+447911123456"]
