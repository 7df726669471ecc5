"""A second day in the web application (docs/web.md), continued: the Account page's
recovery codes, two-factor off and sessions; Reports read on a phone; channel marks."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests import factories
from tests.web.axe import violations
from tests.web.conftest import make_user, sign_in


def test_recovery_codes_download_regenerate_and_two_factor_off(page: Page, live):
    from pathlib import Path

    import pyotp

    from engine.people import two_factor, users

    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner", "Ada")
    sign_in(page, "ada@example.com")
    page.get_by_role("link", name="Account", exact=True).click()
    page.get_by_role("button", name="Set up two-factor authentication").click()
    link = page.get_by_role("link", name="Open in your authenticator app")
    assert link.get_attribute("href").startswith("otpauth://totp/")
    totp = pyotp.TOTP(page.get_by_role("textbox", name="Secret key").input_value())
    page.get_by_role("textbox", name="Code").fill(totp.now())
    page.get_by_role("button", name="Turn on two-factor authentication").click()
    codes = page.get_by_role("textbox", name="Recovery codes").input_value().split("\n")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download recovery codes").click()
    assert Path(download.value.path()).read_text().split() == codes
    assert download.value.suggested_filename == "herald-recovery-codes.txt"

    page.get_by_role("button", name="Regenerate recovery codes").click()
    fresh = page.get_by_role("textbox", name="Recovery codes").input_value().split("\n")
    assert len(fresh) == 10 and not set(fresh) & set(codes)
    ada = users.find("ada@example.com")
    assert two_factor.verify(ada, codes[0]) is None  # the old ones stopped working
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 900})
        assert violations(page) == []

    page.get_by_role("textbox", name="Password").fill("not my password")
    page.get_by_role("textbox", name="Code", exact=True).fill(fresh[0])
    page.get_by_role("button", name="Turn off two-factor authentication").click()
    expect(page.get_by_role("textbox", name="Password")).to_have_attribute("aria-invalid",
                                                                            "true")
    assert two_factor.enabled(ada)
    assert violations(page) == []
    page.get_by_role("textbox", name="Password").fill("correct horse battery")
    page.get_by_role("textbox", name="Code", exact=True).fill(fresh[1])
    page.get_by_role("button", name="Turn off two-factor authentication").click()
    expect(page.get_by_role("status")).to_contain_text("Two-factor authentication is off")
    assert not two_factor.enabled(ada)
    expect(page.get_by_role("button", name="Set up two-factor authentication")).to_be_visible()


def test_sessions_say_which_and_sign_out_everywhere_else(page: Page, live, browser):
    from engine.database.models.people import WebSession

    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner", "Ada")
    others = []
    for agent in ("Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0 Safari/537.36",) * 2:
        context = browser.new_context(base_url=live.url, user_agent=agent)
        sign_in(context.new_page(), "ada@example.com")
        others.append(context)
    sign_in(page, "ada@example.com")
    page.goto("/account")
    buttons = page.get_by_role("button", name="End session", exact=True)
    expect(buttons).to_have_count(2)
    descriptions = [b.get_attribute("aria-describedby") for b in buttons.all()]
    texts = [page.locator(f"#{d}").inner_text() for d in descriptions]
    assert all("Chrome on Linux, IP address 127.0.0.1, last active" in t for t in texts)
    expect(page.get_by_role("region", name="Sessions")).to_have_attribute("tabindex", "0")
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 900})
        assert violations(page) == []
    page.get_by_role("button", name="Sign out everywhere else").click()
    expect(page.get_by_role("status")).to_contain_text("2 other sessions ended")
    assert WebSession.select().count() == 1
    for context in others:
        context.pages[0].goto("/account")
        expect(context.pages[0].get_by_role("button", name="Sign in", exact=True)
               ).to_be_visible()
        context.close()


def test_the_reports_chart_has_readable_axes_on_a_phone(page: Page, live):
    from tests.web.test_reports_page import mixed_run

    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    mixed_run(ws)
    sign_in(page, "mia@example.com", start=f"/w/{ws.id}/reports/")
    page.set_viewport_size({"width": 375, "height": 900})
    figure = page.locator("figure.chart")
    ticks = figure.locator(".y-axis span")
    expect(ticks.first).to_have_text(re.compile(r"^\d+$"))
    expect(ticks.last).to_have_text("0")
    expect(figure.locator(".x-axis span").first).to_have_text(
        re.compile(r"^\d{1,2} [A-Z][a-z]{2}$"))
    sizes = figure.locator(".y-axis span, .x-axis span").evaluate_all(
        "spans => spans.map(s => parseFloat(getComputedStyle(s).fontSize))")
    assert sizes and min(sizes) >= 12, sizes  # were 5 px: SVG text scaled to the width
    assert violations(page) == []


def test_tables_that_scroll_on_a_phone_say_so(page: Page, live):
    from engine.catalog import suppressions
    from tests.web.test_reports_page import mixed_run

    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner", "Ada")
    mixed_run(ws)
    suppressions.add(ws.id, ["gone@example.net"], "manual")
    sign_in(page, "ada@example.com")
    page.set_viewport_size({"width": 375, "height": 900})
    for path, name in (("reports/", "Notifications"), ("settings/members", "Members"),
                       ("settings/suppressions", "Suppressed addresses")):
        page.goto(f"/w/{ws.id}/{path}")
        region = page.get_by_role("region", name=f"{name}, scrolls sideways")
        expect(region).to_have_attribute("tabindex", "0")
        expect(page.get_by_text("On a narrow screen the table scrolls sideways.")
               ).to_be_visible()
        assert violations(page) == []
    page.set_viewport_size({"width": 1280, "height": 900})
    expect(page.get_by_text("On a narrow screen the table scrolls sideways.")).to_be_hidden()


def test_a_reports_row_links_by_its_recipient_and_channels_have_marks(page: Page, live):
    from tests.web.test_reports_page import mixed_run

    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    mixed_run(ws)
    factories.template(ws, channel="sms")
    sign_in(page, "mia@example.com", start=f"/w/{ws.id}/reports/")
    table = page.get_by_role("table", name="Notifications")
    first = table.locator("tbody tr").first
    link = first.get_by_role("link")
    expect(link).to_have_text(re.compile(r"@|^\+\d+$"))  # the recipient, not the time
    link.click()
    expect(page.get_by_role("heading", name="Notification")).to_be_visible()
    page.goto(f"/w/{ws.id}/templates")
    marks = page.locator(".channel-icon")
    expect(marks.first).to_have_attribute("aria-hidden", "true")
    contents = marks.evaluate_all(
        "els => els.map(e => getComputedStyle(e, '::before').content)")
    assert len(set(contents)) == 2, contents  # email and SMS each their own
    assert violations(page) == []


def test_a_notification_from_a_list_links_to_its_list(page: Page, live):
    from engine.database.models.lists import RecipientList

    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    template = factories.template(ws)
    kept = RecipientList.create(workspace=ws, template=template, version_number=1,
                                channel="email", filename="march.csv",
                                columns=["email address", "name"],
                                rows=[["ada@example.net", "Ada"]], row_count=1, status="sent")
    n = factories.notification(ws, factories.email_payload())
    n.template, n.correlation_id = template, f"list-{kept.id.hex}-2"
    n.save()
    sign_in(page, "mia@example.com", start=f"/w/{ws.id}/reports/notifications/{n.id}")
    page.get_by_role("link", name="march.csv").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("march.csv")
