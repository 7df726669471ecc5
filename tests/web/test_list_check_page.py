"""The list check page in Chromium: the file as a table whose bad cells are marked (a
visible "Error", described by their problem), each problem quoting the value it refused,
and a passing file's first message shown in full with its subject (email) or text (SMS);
axe-clean at 1280 and 375 px."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from engine.database.models import Notification
from engine.database.models.lists import RecipientList
from tests import factories
from tests.web.axe import violations
from tests.web.conftest import make_user, sign_in
from tests.web.test_send_to_a_list import _upload


def _signed_in(page: Page, channel: str = "email"):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    template = factories.template(ws, channel)
    sign_in(page, "mia@example.com")
    return ws, template


def _axe_clean(page: Page) -> None:
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 900})
        assert violations(page) == []


def test_bad_cells_are_marked_and_each_problem_quotes_its_value(page: Page, live):
    ws, template = _signed_in(page)
    _upload(page, ws, template, "email address,name,time zone\n"
                                "ada@example.net,Ada,Europe/London\n"
                                "grace@<b>x</b>,Grace,Europe/London\n"
                                "alan@example.net,Alan,Mars/Olympus\n"
                                "edsger@example.net,Edsger,UTC,extra\n")
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("row 3: email address is not a valid address: “grace@<b>x</b>”")
    expect(alert).to_contain_text("row 4: time zone 'Mars/Olympus' is not a time zone name")

    table = page.get_by_role("region", name="The file's rows").get_by_role("table")
    expect(table.get_by_role("columnheader", name="email address")).to_be_visible()
    expect(table.get_by_role("columnheader", name="time zone")).to_be_visible()
    expect(table.get_by_role("rowheader", name="2", exact=True)).to_be_visible()
    # The two bad cells carry a visible "Error" and their problem as their description.
    bad = table.get_by_role("cell", name="Error grace@<b>x</b>")
    expect(bad).to_be_visible()  # the value escaped: shown as typed, never markup
    expect(bad).to_have_accessible_description(
        "row 3: email address is not a valid address: “grace@<b>x</b>”")
    zone = table.get_by_role("cell", name="Error Mars/Olympus")
    expect(zone).to_have_accessible_description(
        "row 4: time zone 'Mars/Olympus' is not a time zone name such as Europe/London or "
        "America/New_York")
    # A good cell is not marked.
    good = table.get_by_role("cell", name="ada@example.net", exact=True)
    expect(good).to_be_visible()
    assert good.get_attribute("aria-describedby") is None
    assert table.locator(".bad-cell").count() == 2
    # A problem of the whole row marks its number.
    whole = table.get_by_role("rowheader", name="5 Error")
    expect(whole).to_have_accessible_description("row 5: it has 4 cells; row 1 names 3 columns")
    assert RecipientList.select().count() == 0 and Notification.select().count() == 0
    _axe_clean(page)


def test_a_bad_phone_number_is_marked_in_an_sms_list(page: Page, live):
    ws, template = _signed_in(page, "sms")
    _upload(page, ws, template, "phone number,code\n+14155550100,1\n07700 900123,2\n")
    expect(page.get_by_role("alert")).to_contain_text(
        "row 3: phone number is not a valid address: “07700 900123”")
    cell = page.get_by_role("cell", name="Error 07700 900123")
    expect(cell).to_have_accessible_description(
        "row 3: phone number is not a valid address: “07700 900123”")
    _axe_clean(page)


def test_a_passing_file_shows_its_rows_and_the_first_message_in_full(page: Page, live):
    ws, template = _signed_in(page)  # subject "Hi {{name}}", body "<p>Hello {{name}}</p>"
    _upload(page, ws, template, "email address,name\n" + "".join(
        f"p{n}@example.net,P{n}\n" for n in range(2, 27)))
    expect(page.get_by_role("button", name="Send 25 notifications")).to_be_visible()
    table = page.get_by_role("region", name="The file's rows").get_by_role("table")
    expect(table.get_by_role("cell", name="p2@example.net", exact=True)).to_be_visible()
    expect(table.get_by_role("rowheader", name="21", exact=True)).to_be_visible()
    expect(table.get_by_role("rowheader", name="22", exact=True)).to_have_count(0)
    expect(page.get_by_text("5 more rows are not shown.")).to_be_visible()
    assert table.locator(".bad-cell").count() == 0
    expect(page.get_by_text("Subject: Hi P2")).to_be_visible()
    frame = page.locator('iframe[title="Preview"]')
    assert frame.get_attribute("sandbox") == ""  # no allow-scripts, no allow-same-origin
    expect(page.frame_locator('iframe[title="Preview"]').get_by_text("Hello P2")).to_be_visible()
    _axe_clean(page)


def test_an_sms_lists_first_message_shows_its_text(page: Page, live):
    ws, template = _signed_in(page, "sms")  # body "Code {{code}}"
    _upload(page, ws, template, "phone number,code\n+1 (415) 555-0100,4711\n")
    expect(page.get_by_role("button", name="Send 1 notification")).to_be_visible()
    expect(page.locator("pre.first-text")).to_have_text("Code 4711")
    expect(page.get_by_role("cell", name="+14155550100")).to_be_visible()
    _axe_clean(page)
