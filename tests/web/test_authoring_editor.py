"""The template editor in Chromium: two tabs on one draft, a failed save, hostile text,
publish refusals, versions (lock, compare), SMS and webhook templates with test sends."""

from __future__ import annotations

import re

from playwright.sync_api import Browser, Page, expect

from engine.authoring import drafts
from engine.catalog import versions
from engine.database.models import Template, TemplateVersion
from engine.database.models.inbox import InboxMessage
from tests import factories
from tests.support.https_receiver import Scripted
from tests.web.authoring_support import (
    click_when_ready,
    code_text,
    replace_text,
    running_worker,
    wait_for,
)
from tests.web.conftest import conflicting_tabs, make_user, open_editor, sign_in


def test_two_tabs_on_one_draft_do_not_overwrite_each_other(browser: Browser, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    template = factories.template(ws, publish_it=False)
    first, second = conflicting_tabs(browser, live, template, "<p>Written in the first tab</p>",
                                     "<p>Written in the second tab</p>")
    status = second.get_by_role("status")
    alert = second.get_by_role("alert")
    expect(alert).to_contain_text("mia@example.com saved this draft")
    expect(alert).to_contain_text("<p>Written in the first tab</p>")
    assert code_text(second, "body") == "<p>Written in the second tab</p>"  # kept, unsaved
    assert versions.current_draft(template).content["body"] == "<p>Written in the first tab</p>"

    # The second tab chooses its text: saved over the revision it was shown.
    second.get_by_role("button", name="Replace their text with mine").click()
    expect(status).to_have_text("Saved")
    assert versions.current_draft(template).content["body"] == \
        "<p>Written in the second tab</p>"
    # Now the first tab is the stale one, and is told so in turn.
    replace_text(first, "Body", "<p>First again</p>")
    expect(first.get_by_role("status")).to_have_text(
        "Not saved: this draft was changed elsewhere")
    expect(first.get_by_role("alert")).to_contain_text("Written in the second tab")
    first.get_by_role("link", name="Load their text").click()
    assert code_text(first, "body") == "<p>Written in the second tab</p>"
    for tab in (first, second):
        tab.context.close()


def test_a_save_that_cannot_reach_the_server_says_so_and_keeps_the_text(page: Page, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    template = factories.template(ws, publish_it=False)
    sign_in(page, "mia@example.com")
    open_editor(page, template)
    page.route("**/draft", lambda route: route.abort())
    replace_text(page, "Body", "<p>Offline words</p>")
    expect(page.get_by_role("status")).to_contain_text("Not saved: the server cannot be reached")
    assert code_text(page, "body") == "<p>Offline words</p>"
    assert versions.current_draft(template).content["body"] != "<p>Offline words</p>"
    page.unroute("**/draft")
    page.get_by_role("textbox", name="Subject").fill("Back online")
    expect(page.get_by_role("status")).to_have_text("Saved")
    saved = wait_for(lambda: (c := versions.current_draft(template).content)["subject"] ==
                     "Back online" and c, "the subject saved")
    assert saved["body"] == "<p>Offline words</p>"


HOSTILE = ('<script>document.title="pwned";top.document.title="pwned"</script>'
           '<img src="data:," onerror="top.document.title=\'pwned\'">'
           '<p>Hi {{name}}</p>')


def test_hostile_template_text_stays_inert_in_the_editor_and_the_preview(page: Page, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    template = factories.template(ws, publish_it=False)
    Template.update(name='<img src="data:," onerror="document.title=\'pwned\'">').where(
        Template.id == template.id).execute()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    sign_in(page, "mia@example.com")
    open_editor(page, template)
    replace_text(page, "Body", HOSTILE)
    page.get_by_role("textbox", name="Subject").fill('</title><script>alert(1)</script>')
    page.get_by_role("textbox", name="Sample tags").fill(
        '{"name": "<script>alert(2)</script>"}')
    expect(page.get_by_role("status")).to_have_text("Saved")
    frame = page.frame_locator('iframe[title="Preview"]')
    expect(frame.get_by_text("Hi <script>alert(2)</script>")).to_be_visible()
    expect(page.get_by_text("</title><script>alert(1)</script>", exact=True)).to_be_visible()
    page.reload()
    expect(frame.get_by_text("Hi <script>alert(2)</script>")).to_be_visible()
    assert page.title() != "pwned" and dialogs == []
    sandbox = page.locator('iframe[title="Preview"]').get_attribute("sandbox")
    assert sandbox == ""  # no allow-scripts, no allow-same-origin
    content = page.frames[1]
    assert content.title() != "pwned"  # the document's own script never ran either


def test_publish_refusals_say_where_and_keep_the_text(page: Page, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    template = factories.template(ws, publish_it=False)
    sign_in(page, "mia@example.com")
    open_editor(page, template)
    replace_text(page, "Body", "<p>Hello</p>\n<p>{{#if vip}}VIP</p>")
    expect(page.get_by_text(re.compile(r"Body: line 2, column \d+: block 'if'")).first
           ).to_be_visible()
    page.get_by_role("textbox", name="From address").fill("ceo@bank.example")
    page.get_by_role("button", name="Publish").click()
    summary = page.get_by_role("alert")
    expect(summary).to_contain_text("Body: line 2, column")
    expect(summary).to_contain_text("ceo@bank.example is not a verified sender")
    expect(page.get_by_role("textbox", name="From address")).to_have_attribute(
        "aria-invalid", "true")
    assert code_text(page, "body") == "<p>Hello</p>\n<p>{{#if vip}}VIP</p>"
    draft = versions.current_draft(template)
    assert draft.content["fromAddress"] == "ceo@bank.example"  # saved, not published
    assert not TemplateVersion.select().where(TemplateVersion.status == "live").exists()


def test_versions_lock_unlock_and_compare(page: Page, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    template = factories.template(ws)
    sign_in(page, "mia@example.com")
    open_editor(page, template)
    replace_text(page, "Body", "<p>Hello {{name}}</p>\n<p>A second line</p>")
    expect(page.get_by_role("status")).to_have_text("Saved")
    page.get_by_role("button", name="Publish").click()
    row = page.get_by_role("row", name="1 Previous")
    row.get_by_role("button", name="Lock").click()
    expect(page.get_by_role("row", name="1 Previous Locked")).to_be_visible()
    assert TemplateVersion.get(TemplateVersion.number == 1).locked
    page.get_by_role("row", name="1 Previous").get_by_role("button", name="Unlock").click()
    expect(page.get_by_role("row", name="1 Previous Locked")).to_have_count(0)
    page.get_by_role("row", name="1 Previous").get_by_role("link", name="Compare").click()
    expect(page.get_by_role("heading", name="Body changed")).to_be_visible()
    expect(page.get_by_role("heading", name="Subject unchanged")).to_be_visible()
    diff = page.get_by_role("region", name="Body changed")
    expect(diff.get_by_role("columnheader", name="Version 1 (Previous)")).to_be_visible()
    expect(diff.get_by_role("columnheader", name="Version 2 (Live)")).to_be_visible()
    expect(diff.get_by_role("row", name=re.compile(r"2 added: <p>A second line"))
           ).to_be_visible()
    page.get_by_role("combobox", name="Right").select_option(label="Version 1 (Previous)")
    page.get_by_role("button", name="Compare").click()
    expect(page.get_by_role("heading", name="Body unchanged")).to_be_visible()


def test_sms_and_webhook_templates_publish_and_test_send(page: Page, live, receiver, ca_file):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    project = factories.template(ws).project
    sign_in(page, "mia@example.com")
    page.goto(f"/w/{ws.id}/projects/{project.id}")
    page.get_by_role("button", name="New template").click()
    page.get_by_role("textbox", name="Name").fill("Code")
    page.get_by_role("combobox", name="Channel").select_option(label="SMS")
    page.get_by_role("button", name="Create").click()
    replace_text(page, "Body", "Your code is {{code}}")
    page.get_by_role("textbox", name="From number").fill("+15005550006")
    page.get_by_role("textbox", name="Sample tags").fill('{"code": "123456"}')
    expect(page.get_by_role("status")).to_have_text("Saved")
    expect(page.frame_locator('iframe[title="Preview"]').get_by_text("Your code is 123456")
           ).to_be_visible()
    page.get_by_role("button", name="Publish").click()
    expect(page.get_by_role("status")).to_have_text("Published: version 1 is live")
    receiver.script["/missing"] = [Scripted(status=404, body=b"no such hook")]
    with running_worker(live, REQUESTS_CA_BUNDLE=ca_file):
        page.get_by_role("textbox", name="Test recipient").fill("+14155550100")
        click_when_ready(page, "Send test")
        expect(page.get_by_text("Test delivered to +14155550100.")).to_be_visible(
            timeout=15_000)
        (sms,) = wait_for(lambda: list(InboxMessage.select().where(
            InboxMessage.channel == "sms")), "the SMS in the inbox")
        assert sms.text == "Your code is 123456" and sms.to == ["+14155550100"]

        page.get_by_role("link", name=project.name).click()
        page.get_by_role("button", name="New template").click()
        page.get_by_role("textbox", name="Name").fill("Order hook")
        page.get_by_role("combobox", name="Channel").select_option(label="Webhook")
        page.get_by_role("button", name="Create").click()
        replace_text(page, "Body", '{"order": "{{orderId}}"}')
        expect(page.get_by_role("textbox", name="Content type")).to_have_value(
            "application/json")
        page.get_by_role("textbox", name="Sample tags").fill('{"orderId": "A-1"}')
        expect(page.get_by_role("status")).to_have_text("Saved")
        page.get_by_role("textbox", name="Test recipient").fill(
            receiver.url("/hook", "localhost"))
        click_when_ready(page, "Send test")
        expect(page.get_by_text(re.compile(r"Test delivered to https://localhost"))
               ).to_be_visible(timeout=15_000)
        (request,) = receiver.received
        assert request.body == b'{"order": "A-1"}'
        assert request.headers["X-Service-Test"] == "true"
        # A refusal by the receiver is the provider's error, shown as it came.
        page.get_by_role("textbox", name="Test recipient").fill(
            receiver.url("/missing", "localhost"))
        click_when_ready(page, "Send test")
        expect(page.get_by_text("Test failed: receiver answered 404")).to_be_visible(
            timeout=15_000)


def _requests_to(page: Page, ending: str) -> list[str]:
    """The URLs of the page's requests whose path ends with ``ending``, as they are made."""
    seen: list[str] = []
    page.on("request", lambda request: seen.append(request.url)
            if request.url.split("?")[0].endswith(ending) else None)
    return seen


def test_an_autosave_while_publish_has_focus_saves_and_does_not_publish(page: Page, live):
    """htmx sends a form's request to the action of the submit button that last had focus
    (its formaction): an autosave made while Publish had focus went to Publish, and raced
    the click's own submit (one of the two then answered "nothing changed")."""
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    template = factories.template(ws)  # version 1 live
    sign_in(page, "mia@example.com")
    open_editor(page, template)
    published = _requests_to(page, "/publish")
    replace_text(page, "Body", "<p>Typed, then Tab to Publish</p>")
    page.get_by_role("button", name="Publish").focus()  # before autosave's 800 ms
    expect(page.get_by_role("status")).to_have_text("Saved")
    assert published == []
    assert drafts.live_version(template).number == 1
    assert versions.current_draft(template).content["body"] == \
        "<p>Typed, then Tab to Publish</p>"


def test_an_autosave_while_replace_has_focus_does_not_replace_their_text(browser: Browser,
                                                                         live):
    """The conflict's button carries the choice to overwrite: an autosave sent while it had
    focus must not carry it too."""
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    template = factories.template(ws, publish_it=False)
    first, second = conflicting_tabs(browser, live, template, "<p>Theirs</p>", "<p>Mine</p>")
    with second.expect_response(lambda answer: answer.url.endswith("/draft")) as autosave:
        replace_text(second, "Body", "<p>Mine, longer</p>")
        second.get_by_role("button", name="Replace their text with mine").focus()
    assert autosave.value.ok
    expect(second.get_by_role("status")).to_have_text(
        "Not saved: this draft was changed elsewhere")
    assert versions.current_draft(template).content["body"] == "<p>Theirs</p>"
    for tab in (first, second):
        tab.context.close()
