"""A channel a plugin brings is served everywhere a built-in one is, in Chromium: the example
chat channel (examples/herald-chat-channel), installed as an operator installs it (its own
package, its one entry point), is picked in New template, edited and previewed in the
editor, published, sent to a list of room members by a real worker, and read in Reports
(each member a recipient, its message and timeline). Nothing of it is written outside its
package (tests/test_channel_names.py, tests/web/test_authoring_requests.py)."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from engine.database.models import Notification, Project, Template
from tests import factories
from tests.support.vendor_server import VendorServer
from tests.web.authoring_support import replace_text, running_worker, wait_for
from tests.web.conftest import make_user, sign_in


@pytest.fixture
def room():
    server = VendorServer(lambda path, headers, body: (200, {"X-Message-Id": "m-1"}, {}))
    yield server
    server.close()


@pytest.fixture
def chat(example_package, plugins_from):
    """The example package installed in a folder of its own and loaded by the registry of
    this process (the live server's): its folder, for the worker's PYTHONPATH."""
    target = example_package("herald-chat-channel")
    plugins_from(target)
    return target


def test_the_chat_channel_is_edited_previewed_sent_to_a_list_and_reported(
        page: Page, live, chat, room):
    ws = factories.workspace()
    Project.create(workspace=ws, name="Team")
    make_user("mia@example.com", ws, "member", "Mia")
    sign_in(page, "mia@example.com")

    # New template: the plugin's channel is one of the Channel select's choices.
    page.goto(f"/w/{ws.id}/templates/new?kind=template")
    page.get_by_role("textbox", name="Name").fill("Standup")
    page.get_by_role("combobox", name="Channel").select_option(label="Chat")
    page.get_by_role("button", name="Create").click()
    expect(page.get_by_role("heading", name="Standup Chat template")).to_be_visible()
    template = Template.get(Template.name == "Standup")
    assert template.channel == "chat"

    # The editor draws its declared fields; the preview renders the text as typed.
    page.wait_for_load_state()
    replace_text(page, "Body", "Standup at {{time}}")
    page.get_by_role("textbox", name="url", exact=True).fill(
        f"http://127.0.0.1:{room.port}/hooks/team")
    page.get_by_role("textbox", name="Sample tags").fill('{"time": "10:00"}')
    frame = page.frame_locator('iframe[title="Preview"]')
    expect(frame.get_by_text("Standup at 10:00")).to_be_visible()
    expect(page.get_by_role("status")).to_have_text("Saved")
    page.get_by_role("button", name="Publish").click()
    expect(page.get_by_role("row", name="1 Live")).to_be_visible()

    # Send to a list: a file of room members, checked, then sent by a worker.
    page.get_by_role("link", name="Send to a list").click()
    page.get_by_label("Recipients file").set_input_files(files=[{
        "name": "team.csv", "mimeType": "text/csv",
        "buffer": b"Member,time\nada,10:00\ngrace,11:30\n"}])
    page.get_by_role("button", name="Upload").click()
    send = page.get_by_role("button", name="Send 2 notifications")
    expect(send).to_be_visible()
    expect(page.frame_locator('iframe[title="Preview"]').get_by_text(
        "Standup at 10:00")).to_be_visible()
    assert Notification.select().count() == 0  # checked, nothing sent
    with running_worker(live, PYTHONPATH=str(chat)):
        send.click()
        expect(page.get_by_role("heading", name="List team.csv")).to_be_visible()
        wait_for(lambda: len(room.requests) == 2, "two messages posted to the room")
        expect(page.locator("dt:text-is('Delivered') + dd")).to_have_text("2", timeout=30_000)
    posted = sorted(json.loads(body)["text"] for path, _, body in room.requests)
    assert posted == ["@ada Standup at 10:00", "@grace Standup at 11:30"]
    assert {path for path, _, _ in room.requests} == {"/hooks/team"}

    # Reports: each member is a recipient, found by the Recipient filter; the page of the
    # notification shows its channel, recipient, message and what became of it.
    page.goto(f"/w/{ws.id}/reports")
    page.get_by_role("textbox", name="Recipient").fill("grace")
    page.get_by_role("button", name="Filter").click()
    feed = page.get_by_role("table", name="Notifications")
    expect(feed.get_by_role("row").filter(has_text="grace")).to_contain_text("chat")
    expect(feed).not_to_contain_text("ada")
    grace = next(n for n in Notification.select() if n.payload["member"] == "grace")
    page.goto(f"/w/{ws.id}/reports/notifications/{grace.id}")
    facts = page.locator("dl.facts")
    expect(facts).to_contain_text("chat")
    expect(facts).to_contain_text("grace, 127.0.0.1")
    expect(page.get_by_role("region", name="Message")).to_contain_text("Standup at 11:30")
    timeline = page.get_by_role("list", name="Timeline")
    expect(timeline).to_contain_text("attempt 1: delivered")
    expect(timeline).to_contain_text("delivered")
