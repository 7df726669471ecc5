"""Settings > Suppressions shows each row's scope, filters by it, adds with it, and carries
it through a CSV export and import (docs/web.md)."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect

from engine.catalog import suppressions
from engine.database.models import Suppression
from engine.delivery.tracking import unsubscribe_url
from engine.reports import events
from tests import factories
from tests.web.conftest import csrf_token, make_user, sign_in


def test_the_suppressions_page_shows_filters_and_sets_the_scope(page: Page, live, tmp_path):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "admin", "Ada")
    sign_in(page, "ada@example.com")
    suppressions.add(ws.id, ["left@example.net"], "unsubscribe")
    suppressions.add(ws.id, ["gone@example.net"], "bounce")
    page.goto(f"/w/{ws.id}/settings/suppressions")
    table = page.get_by_role("table")
    expect(table.get_by_role("columnheader", name="Scope")).to_be_visible()
    expect(page.get_by_role("row", name="left@example.net")).to_contain_text("Marketing only")
    expect(page.get_by_role("row", name="gone@example.net")).to_contain_text("All mail")
    page.get_by_role("combobox", name="Show").select_option("Marketing only")
    page.get_by_role("button", name="Search").click()
    expect(page.get_by_role("row", name="left@example.net")).to_be_visible()
    expect(page.get_by_role("row", name="gone@example.net")).to_have_count(0)
    page.get_by_role("textbox", name="Email address").fill("news@example.net")
    page.get_by_role("combobox", name="Scope").select_option("Marketing only")
    page.get_by_role("button", name="Add suppression").click()
    expect(page.get_by_role("status")).to_contain_text("no Marketing email goes to it")
    assert Suppression.get(Suppression.address == "news@example.net").scope == "marketing"
    forged = page.request.post(f"/w/{ws.id}/settings/suppressions", form={
        "csrf_token": csrf_token(page), "address": "odd@example.net", "scope": "sms"})
    assert forged.status == 400
    assert not Suppression.select().where(Suppression.address == "odd@example.net").exists()
    # A bounce widens an unsubscribe to all mail, and the page says so.
    suppressions.add(ws.id, ["left@example.net"], "bounce")
    page.goto(f"/w/{ws.id}/settings/suppressions")
    expect(page.get_by_role("row", name="left@example.net")).to_contain_text("All mail")
    with page.expect_download() as download:
        page.get_by_role("link", name="Export CSV").click()
    exported = Path(download.value.path()).read_text()
    assert exported.splitlines()[0] == "address,reason,createdAt,scope"
    assert any(line.startswith("news@example.net,manual,") and line.endswith(",marketing")
               for line in exported.splitlines())
    other = factories.workspace()
    make_user("ada@example.com", other, "admin", "Ada")
    upload = tmp_path / "export.csv"
    upload.write_text(exported + "old@example.net,,,\n")
    page.goto(f"/w/{other.id}/settings/suppressions")
    page.get_by_label("CSV file").set_input_files(str(upload))
    page.get_by_role("button", name="Import CSV").click()
    expect(page.get_by_role("status")).to_contain_text("4 added")
    scopes = {r.address: r.scope for r in Suppression.select().where(
        Suppression.workspace == other)}
    assert scopes == {"news@example.net": "marketing", "left@example.net": "all",
                      "gone@example.net": "all", "old@example.net": "all"}


def test_a_notification_report_shows_what_its_unsubscribe_and_bounce_suppress(page: Page,
                                                                              live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    sign_in(page, "mia@example.com")
    n = factories.notification(ws, factories.email_payload(
        emailType="Marketing", to=["ada@example.net", "gone@example.net"]), status="delivered")
    # The real one-click endpoint, on the same server.
    link = unsubscribe_url(str(n.id), "ada@example.net")
    answer = page.request.post("/t/u/" + link.rsplit("/", 1)[1],
                               form={"List-Unsubscribe": "One-Click"})
    assert answer.status == 200
    events.record(n, events.Reported("bounced", "gone@example.net", "dsn", "5.1.1 unknown"))
    page.goto(f"/w/{ws.id}/reports/notifications/{n.id}")
    timeline = page.get_by_role("list", name="Timeline")
    expect(timeline).to_contain_text("unsubscribed · ada@example.net · suppresses marketing only")
    expect(timeline).to_contain_text("bounced · gone@example.net · from dsn · suppresses all mail")
    expect(page.locator("dl.facts")).to_contain_text(
        "ada@example.net (Marketing only), gone@example.net (All mail)")
