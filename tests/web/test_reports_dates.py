"""Reports' `From` and `To` take dates as the page says them ("5 Dec 2026") and ISO dates,
with a wrong one marked on its field (docs/web.md, "Reports"), in Chromium."""

from __future__ import annotations

import datetime as dt
import re

from playwright.sync_api import Page, expect

from engine.database.models import utcnow
from tests import factories
from tests.web.axe import violations
from tests.web.conftest import make_user, sign_in


def _said(day: dt.date) -> str:
    return f"{day.day} {day:%b %Y}"


def test_from_and_to_take_the_pages_date_format_and_iso(page: Page, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    now = utcnow()
    for days_ago, who in ((0, "today@example.net"), (3, "three@example.net"),
                          (10, "ten@example.net")):
        factories.notification(ws, factories.email_payload(to=[who]), status="delivered",
                               created_at=now - dt.timedelta(days=days_ago))
    sign_in(page, "mia@example.com", start=f"/w/{ws.id}/reports/")
    rows = page.get_by_role("table", name="Notifications").locator("tbody tr")
    start, end = now.date() - dt.timedelta(days=5), now.date() - dt.timedelta(days=1)
    page.get_by_role("textbox", name="From").fill(_said(start))
    page.get_by_role("textbox", name="To").fill(_said(end).upper())
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("three@example.net")
    page.get_by_role("textbox", name="From").fill((now.date() - dt.timedelta(days=12)
                                                   ).isoformat())
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(2)
    # A wrong date is marked on its field, its message beside it, the value kept.
    field = page.get_by_role("textbox", name="To")
    field.fill("31 Smarch 2026")
    page.get_by_role("button", name="Filter").click()
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_have_value("31 Smarch 2026")
    expect(field).to_have_accessible_description(re.compile(
        "Enter a date such as 5 Dec 2026 or 2026-12-05; got “31 Smarch 2026”."))
    expect(page.get_by_role("alert")).to_contain_text("Enter a date such as 5 Dec 2026")
    expect(page.get_by_role("textbox", name="From")).not_to_have_attribute(
        "aria-invalid", "true")
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 800})
        assert violations(page) == []
