"""Issue 42's "Done when", in Chromium: a five-row list is checked and nothing is sent before
`Send 5 notifications`, then five messages arrive (through a real worker) each with its
row's tags and the list's page counts them; a file with a bad address names its row and
sends nothing; a file without a recipient column says which column it needs."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from engine.people.models import AuditEvent
from engine.store.models import InboxMessage, Notification, RecipientList
from tests import factories
from tests.web.authoring_support import running_worker, wait_for
from tests.web.conftest import make_user, sign_in

PEOPLE = [("ada@example.net", "Ada"), ("grace@example.net", "Grace"),
          ("alan@example.net", "Alan"), ("edsger@example.net", "Edsger"),
          ("barbara@example.net", "Barbara")]


def _upload(page: Page, ws, template, text: str) -> None:
    page.goto(f"/w/{ws.id}/templates/{template.id}")
    page.get_by_role("link", name="Send to a list").click()
    page.get_by_label("Recipients file").set_input_files(
        files=[{"name": "people.csv", "mimeType": "text/csv", "buffer": text.encode()}])
    page.get_by_role("button", name="Upload").click()


def _signed_in(page: Page):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    template = factories.template(ws)  # subject "Hi {{name}}", body "<p>Hello {{name}}</p>"
    sign_in(page, "mia@example.com")
    return ws, template


def test_a_five_row_list_is_checked_then_sent(page: Page, live):
    ws, template = _signed_in(page)
    _upload(page, ws, template, "Email Address,Name\n" + "".join(
        f"{address},{name}\n" for address, name in PEOPLE))

    send = page.get_by_role("button", name="Send 5 notifications")
    expect(send).to_be_visible()
    frame = page.frame_locator('iframe[title="Preview"]')
    expect(frame.get_by_text("Hello Ada")).to_be_visible()
    assert Notification.select().count() == 0  # checked, nothing sent

    with running_worker(live):
        send.click()
        expect(page.get_by_role("heading", name="List people.csv")).to_be_visible()
        wait_for(lambda: InboxMessage.select().count() == 5, "five messages in the inbox")
        got = {m.to[0]: (m.subject, m.html) for m in InboxMessage.select()}
        for address, name in PEOPLE:
            subject, html = got[address]
            assert subject == f"Hi {name}" and f"Hello {name}" in html

        # The list's page refreshes its counts by itself while messages are queued.
        expect(page.locator("dt:text-is('Delivered') + dd")).to_have_text("5", timeout=30_000)
    expect(page.get_by_role("status")).to_contain_text("Sent: 5 of 5 rows accepted.")
    (event,) = AuditEvent.select().where(AuditEvent.action == "list.sent")
    kept = RecipientList.get()
    assert event.subject == "people.csv" and event.details["listId"] == str(kept.id)
    assert event.actor_label == "mia@example.com"

    # The list is one of the Reports page's filters.
    page.get_by_role("link", name="This list in Reports").click()
    expect(page.get_by_role("combobox", name="List")).to_have_value(str(kept.id))
    expect(page.locator("dt:text-is('Delivered') + dd")).to_have_text("5")


def test_a_bad_address_names_its_row_and_sends_nothing(page: Page, live):
    ws, template = _signed_in(page)
    _upload(page, ws, template, "email address,name\nada@example.net,Ada\n"
                                "grace@,Grace\nalan@example.net,Alan\n")
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("row 3: email address is not a valid address")
    expect(alert).to_contain_text("nothing was sent")
    expect(page.get_by_role("button", name="Send 3 notifications")).to_have_count(0)
    expect(page.get_by_label("Recipients file")).to_have_attribute("aria-invalid", "true")
    assert RecipientList.select().count() == 0 and Notification.select().count() == 0


def test_a_file_without_a_recipient_column_says_which_it_needs(page: Page, live):
    ws, template = _signed_in(page)
    _upload(page, ws, template, "email,name\nada@example.net,Ada\n")
    expect(page.get_by_role("alert")).to_contain_text(
        "The file needs a column named 'email address'")
    assert RecipientList.select().count() == 0
