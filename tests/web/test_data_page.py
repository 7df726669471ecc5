"""Settings > Data in Chromium: an Admin sets the workspace's retention (a value outside 1 to
3650 is refused with the field marked), the page passes axe; a Member sees no link and
gets 403 for the page and each of its actions."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from engine.database.models import Workspace
from engine.database.models.people import AuditEvent
from tests import factories
from tests.web.axe import violations
from tests.web.conftest import csrf_token, make_user, sign_in


def test_an_admin_sets_the_retention(page: Page, live):
    ws = factories.workspace(retention_days=None)  # made before retention: kept forever
    make_user("ada@example.com", ws, "admin", "Ada")
    sign_in(page, "ada@example.com")
    page.goto(f"/w/{ws.id}/settings")
    page.get_by_role("link", name="Data").click()
    expect(page.get_by_role("main")).to_contain_text("forever")
    assert violations(page) == []
    days = page.get_by_role("textbox", name="Retention (days)")
    for bad in ("0", "3651", "thirty", ""):
        days.fill(bad)
        page.get_by_role("button", name="Save retention").click()
        expect(days).to_have_attribute("aria-invalid", "true")
        expect(page.get_by_role("alert")).to_contain_text("from 1 to 3650")
    assert violations(page) == []
    assert Workspace.get_by_id(ws.id).retention_days is None
    days.fill("7")
    page.get_by_role("button", name="Save retention").click()
    expect(page.get_by_role("status")).to_contain_text("7 days")
    expect(days).to_have_value("7")
    assert Workspace.get_by_id(ws.id).retention_days == 7
    page.goto(f"/w/{ws.id}/settings/")
    expect(page.get_by_role("table", name="This workspace at a glance")).to_contain_text(
        "Recipients and content kept 7 days")
    event = AuditEvent.get(AuditEvent.action == "retention.changed")
    assert event.details == {"before": None, "after": 7}


def test_a_member_cannot_see_or_change_the_data_settings(page: Page, live):
    ws = factories.workspace(retention_days=90)
    make_user("max@example.com", ws, "member", "Max")
    sign_in(page, "max@example.com")
    page.goto(f"/w/{ws.id}/settings")
    expect(page.get_by_role("link", name="Data")).to_have_count(0)
    assert page.goto(f"/w/{ws.id}/settings/data").status == 403
    token = csrf_token(page)
    refused = page.request.post(f"/w/{ws.id}/settings/data/retention",
                                form={"csrf_token": token, "retention_days": "1"})
    assert refused.status == 403
    assert Workspace.get_by_id(ws.id).retention_days == 90


def test_a_purged_notification_says_so_on_its_reports_page(page: Page, live):
    import datetime as dt

    from engine.database.models import utcnow
    from engine.retention.purge import purge

    ws = factories.workspace(retention_days=7)
    make_user("mia@example.com", ws, "member", "Mia")
    old = factories.notification(ws, factories.email_payload(to=["ada@example.net"],
                                                             subject="Secret plans"),
                                 status="delivered", created_at=utcnow() - dt.timedelta(days=9))
    purge(ws.id)
    sign_in(page, "mia@example.com", start=f"/w/{ws.id}/reports/notifications/{old.id}")
    main = page.get_by_role("main")
    expect(main).to_contain_text("purged")
    expect(main).not_to_contain_text("ada@example.net")
    expect(main).not_to_contain_text("Secret plans")
    assert violations(page) == []


def test_an_admin_erases_a_recipient_after_confirming(page: Page, live):
    from engine.catalog import suppressions
    from engine.database.models import Notification, Suppression

    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner", "Ada")
    theirs = factories.notification(ws, factories.email_payload(to=["cy@example.net"]),
                                    status="delivered")
    suppressions.add(ws.id, ["cy@example.net"], "bounce")
    sign_in(page, "ada@example.com", start=f"/w/{ws.id}/settings/data")
    recipient = page.get_by_role("textbox", name="Recipient")
    recipient.fill("not an address at all")
    page.get_by_role("button", name="Erase a recipient").click()
    expect(recipient).to_have_attribute("aria-invalid", "true")
    assert violations(page) == []
    recipient.fill("Cy@Example.net")
    page.get_by_role("button", name="Erase a recipient").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Erase Cy@Example.net?")
    assert violations(page) == []
    assert Notification.get_by_id(theirs.id).payload["to"] == ["cy@example.net"]  # not yet
    page.get_by_role("button", name="Erase a recipient").click()
    expect(page.get_by_role("status")).to_contain_text("1 notifications purged")
    assert set(Notification.get_by_id(theirs.id).payload) == {"purgedAt"}
    assert [s.address[:2] for s in Suppression.select()] == ["h:"]
    page.goto(f"/w/{ws.id}/settings/suppressions")
    expect(page.get_by_role("main")).to_contain_text("erased address (kept as a keyed hash)")
    event = AuditEvent.get(AuditEvent.action == "data.erased")
    assert "cy@" not in f"{event.subject} {event.details}".lower()


def test_a_member_cannot_erase(page: Page, live):
    from engine.database.models import Notification

    ws = factories.workspace()
    make_user("max@example.com", ws, "member", "Max")
    theirs = factories.notification(ws, factories.email_payload(to=["cy@example.net"]),
                                    status="delivered")
    sign_in(page, "max@example.com")
    token = csrf_token(page)
    for path in ("data/erase", "data/erase/confirmed"):
        refused = page.request.post(f"/w/{ws.id}/settings/{path}",
                                    form={"csrf_token": token, "recipient": "cy@example.net"})
        assert refused.status == 403
    assert Notification.get_by_id(theirs.id).payload["to"] == ["cy@example.net"]
