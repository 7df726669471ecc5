"""The Reports page in Chromium: counts that match the feed and the CSV export, test sends
absent; filters (the field marked on a bad value); a notification's timeline."""

from __future__ import annotations

import csv
import io

from playwright.sync_api import Page, expect

from engine.reports import events
from tests import factories
from tests.engine.reports.conftest import Run
from tests.web.conftest import make_user, sign_in

REQUIRED = {"correlationId", "templateId", "channel", "recipient", "status", "createdAt"}


def mixed_run(ws) -> tuple[Run, dict]:
    run = Run(ws, [factories.template(ws), factories.template(ws, "sms")])
    made = {"opened": run.sent(to=("ada@example.net",)),
            "clicked": run.sent(to=("bob@example.net",), days_ago=1),
            "failed": run.sent("failed", to=("cy@example.net",)),
            "sms": run.sent(to=("+14155550100",), channel="sms", template=1),
            "bounced": run.sent(to=("gone@example.net",), days_ago=2)}
    run.track(made["opened"], "open")
    run.track(made["clicked"], "click", "https://example.com/pricing")
    events.record(made["bounced"], events.Reported("bounced", "gone@example.net", "dsn",
                                                   "5.1.1 user unknown"))
    run.sent(is_test=True, to=("tester@example.net",))  # never shown, never counted
    return run, made


def count(page: Page, label: str) -> int:
    term = page.locator("dl.counts dt", has_text=label).first
    return int(term.locator("xpath=following-sibling::dd[1]").inner_text())


def test_counts_match_the_feed_and_the_export_without_test_sends(page: Page, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    mixed_run(ws)
    sign_in(page, "mia@example.com")
    page.get_by_role("link", name="Reports").click()
    shown = {label: count(page, label) for label in (
        "Accepted", "Delivered", "Bounced", "Failed", "Complained", "Opened", "Clicked",
        "Unsubscribed")}
    assert shown == {"Accepted": 5, "Delivered": 3, "Bounced": 1, "Failed": 1, "Complained": 0,
                     "Opened": 1, "Clicked": 1, "Unsubscribed": 0}
    table = page.get_by_role("table", name="Notifications")
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(5)
    statuses = [rows.nth(i).locator("td").nth(5).inner_text() for i in range(5)]
    assert sorted(statuses) == ["bounced", "delivered", "delivered", "delivered", "failed"]
    expect(table).not_to_contain_text("tester@example.net")
    expect(page.get_by_role("img", name="Notifications by day")).to_be_visible()

    with page.expect_download() as download:
        page.get_by_role("link", name="Export CSV").click()
    with open(download.value.path(), encoding="utf-8") as file:
        text = file.read()
    exported = list(csv.DictReader(io.StringIO(text)))
    assert set(exported[0]) >= REQUIRED
    assert len(exported) == shown["Accepted"]
    assert sorted(r["status"] for r in exported) == sorted(statuses)
    assert "tester@example.net" not in text


def test_filters_narrow_and_a_bad_one_is_marked(page: Page, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    mixed_run(ws)
    sign_in(page, "mia@example.com", start=f"/w/{ws.id}/reports/")
    page.get_by_role("textbox", name="Recipient").fill("Bob@Example.net")
    page.get_by_role("button", name="Filter").click()
    rows = page.get_by_role("table", name="Notifications").locator("tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("bob@example.net")
    assert count(page, "Accepted") == 1 and count(page, "Clicked") == 1
    page.get_by_role("textbox", name="Recipient").fill("")
    page.get_by_label("Status").select_option("bounced")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("gone@example.net")
    page.get_by_label("Status").select_option("")
    page.get_by_label("Channel").select_option("sms")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    page.get_by_role("textbox", name="Recipient").fill("two addresses, here")
    page.get_by_role("button", name="Filter").click()
    field = page.get_by_role("textbox", name="Recipient")
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_have_value("two addresses, here")
    expect(page.get_by_role("alert")).to_contain_text("one email address or phone number")


def test_a_notification_page_shows_its_timeline_found_by_correlation_id(page: Page, live):
    ws, other = factories.workspace(), factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    _, made = mixed_run(ws)
    sign_in(page, "mia@example.com", start=f"/w/{ws.id}/reports/")
    page.get_by_role("textbox", name="Correlation id").fill(made["bounced"].correlation_id)
    page.get_by_role("button", name="Filter").click()
    page.get_by_role("table", name="Notifications").locator("tbody tr a").first.click()
    timeline = page.get_by_role("list", name="Timeline")
    expect(timeline).to_contain_text("accepted")
    expect(timeline).to_contain_text("attempt 1: delivered via smtp")
    expect(timeline).to_contain_text("bounced · gone@example.net")
    expect(timeline).to_contain_text("5.1.1 user unknown")
    theirs = factories.notification(other, factories.email_payload())
    answer = page.goto(f"/w/{ws.id}/reports/notifications/{theirs.id}")
    assert answer.status == 404  # another workspace's notification does not exist here
