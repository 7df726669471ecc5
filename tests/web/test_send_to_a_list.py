"""Issue 42's "Done when", in Chromium: a five-row list is checked and nothing is sent before
`Send 5 notifications`, then five messages arrive (through a real worker) each with its
row's tags and the list's page counts them; a file with a bad address names its row and
sends nothing; a file without a recipient column says which column it needs."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from engine.database.models import Notification
from engine.database.models.inbox import InboxMessage
from engine.database.models.lists import RecipientList
from engine.database.models.people import AuditEvent
from engine.queue.queueing import BULK_QUEUE_NAME
from tests import factories
from tests.web.authoring_support import running_worker, wait_for
from tests.web.axe import violations
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


def _run_list_job(list_id) -> None:
    """The list's job, run here as a worker would run it: every row accepted, each
    notification's job left waiting in the bulk queue for the worker started later."""
    from redis import Redis

    from engine import runtime
    from engine.lists import sending

    redis = Redis.from_url(runtime.settings().redis_url)
    key = f"rq:queue:{BULK_QUEUE_NAME}"
    while (job := next((j.decode() for j in redis.lrange(key, 0, -1)
                        if j.decode().startswith("list-")), None)) is not None:
        redis.lrem(key, 1, job)
        sending.expand(str(list_id))


def test_a_cancel_stops_the_queued_rows_and_a_real_worker_sends_none(page: Page, live):
    from redis import Redis

    ws, template = _signed_in(page)
    page.set_viewport_size({"width": 1280, "height": 900})
    _upload(page, ws, template, "email address,name\n" + "".join(
        f"{address},{name}\n" for address, name in PEOPLE))
    page.get_by_role("button", name="Send 5 notifications").click()
    kept = RecipientList.get()
    _run_list_job(kept.id)  # every row accepted and queued; no worker has run yet
    page.reload()
    expect(page.get_by_role("status")).to_contain_text("Sent: 5 of 5 rows accepted.")
    page.get_by_role("button", name="Cancel list").click()
    expect(page.get_by_role("status")).to_have_text(
        "Cancelled: 5 of 5 rows were stopped and are not sent (0 never accepted, 5 taken "
        "back from the queue); 0 had already gone to the provider.")
    redis = Redis.from_url(live.settings.redis_url)
    with running_worker(live):
        # The five delivery jobs still run: each finds its notification cancelled.
        wait_for(lambda: redis.llen(f"rq:queue:{BULK_QUEUE_NAME}") == 0
                 and not redis.zcard(f"rq:wip:{BULK_QUEUE_NAME}")
                 and not redis.zcard(f"rq:registry:started:{BULK_QUEUE_NAME}"),
                 "the worker to take every job")
        wait_for(lambda: all(n.status == "cancelled" for n in Notification.select()),
                 "every notification cancelled")
    assert InboxMessage.select().count() == 0
    page.reload()
    expect(page.locator("dt:text-is('Cancelled') + dd")).to_have_text("5")
    (event,) = AuditEvent.select().where(AuditEvent.action == "list.cancelled")
    assert event.subject == "people.csv"

    # At desktop width each count sits under its own label (a card holds the pair), and
    # the breadcrumb is a row of links, not a numbered list.
    for card in page.locator("dl.counts > div").all():
        label, number = card.locator("dt").bounding_box(), card.locator("dd").bounding_box()
        assert abs(label["x"] - number["x"]) < 2 and number["y"] > label["y"]
    assert page.locator("dl.counts > div").count() == 8
    style = page.locator("nav.crumbs ol").evaluate("e => getComputedStyle(e).listStyleType")
    assert style == "none"
    assert violations(page) == []
    page.goto(f"/w/{ws.id}/templates/{template.id}/lists/new")
    style = page.locator("nav.crumbs ol").evaluate("e => getComputedStyle(e).listStyleType")
    assert style == "none"


def test_a_list_is_scheduled_in_a_time_zone_and_the_schedule_cancelled(page: Page, live):
    import datetime as dt
    import zoneinfo

    ws, template = _signed_in(page)
    _upload(page, ws, template, "email address,name\nada@example.net,Ada\n")
    page.get_by_role("button", name="Schedule").click()
    expect(page.get_by_role("combobox", name="Time zone")).to_have_value("UTC")
    page.get_by_role("textbox", name="Date and time").fill("2020-01-01 09:00")
    page.get_by_role("button", name="Schedule").click()
    expect(page.get_by_role("alert")).to_contain_text("That time has passed")
    expect(page.get_by_role("textbox", name="Date and time")).to_have_attribute(
        "aria-invalid", "true")
    assert violations(page) == []

    local = (dt.datetime.now(dt.UTC) + dt.timedelta(days=2)).astimezone(
        zoneinfo.ZoneInfo("America/New_York"))
    page.get_by_role("textbox", name="Date and time").fill(f"{local:%Y-%m-%d} 09:30")
    page.get_by_role("combobox", name="Time zone").select_option("America/New_York")
    page.get_by_role("button", name="Schedule").click()
    expect(page.get_by_role("status")).to_have_text(
        f"Scheduled for {local.day} {local:%b %Y}, 09:30 (America/New_York).")
    kept = RecipientList.get()
    assert kept.status == "scheduled" and kept.scheduled_for.minute == 30
    assert Notification.select().count() == 0
    assert violations(page) == []
    (event,) = AuditEvent.select().where(AuditEvent.action == "list.scheduled")
    assert event.details["timeZone"] == "America/New_York"

    page.get_by_role("button", name="Cancel schedule").click()
    expect(page.get_by_role("button", name="Send 1 notification")).to_be_visible()
    assert RecipientList.get().status == "checked" and Notification.select().count() == 0
