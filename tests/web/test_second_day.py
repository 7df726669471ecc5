"""What a new author and a new admin still tripped on, on a second day (docs/web.md), in
Chromium: each finding a test that failed before its fix."""

from __future__ import annotations

import datetime as dt
import re

import requests
from playwright.sync_api import Page, expect

from tests import factories
from tests.web.axe import violations
from tests.web.conftest import make_user, sign_in
from tests.web.test_senders_page import zoned  # noqa: F401 (a fixture)


def test_an_unknown_url_is_the_page_not_found_page_for_a_browser(page: Page, live):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner", "Ada")
    sign_in(page, "ada@example.com")
    for path in (f"/w/{ws.id}/no-such-page", "/no-such-page"):
        answer = page.goto(path)
        assert answer.status == 404
        assert answer.headers["content-type"].startswith("text/html")
        assert "script-src 'self'" in answer.headers["content-security-policy"]
        expect(page.get_by_role("heading", name="Page not found")).to_be_visible()
        for width in (1280, 375):
            page.set_viewport_size({"width": width, "height": 800})
            assert violations(page) == []
    # A client that wants JSON, and the API's own paths, still get problem details.
    for path, accept in (("/no-such-page", "application/json"),
                         ("/api/v1/no-such-thing", "text/html,*/*")):
        answer = requests.get(live.url + path, headers={"Accept": accept}, timeout=10)
        assert answer.status_code == 404
        assert answer.headers["Content-Type"] == "application/problem+json"


def test_a_uk_from_number_publishes_and_a_spaced_test_recipient_is_taken(page: Page, live):
    from engine.database.models.inbox import InboxMessage
    from tests.web.authoring_support import click_when_ready, replace_text, running_worker
    from tests.web.authoring_support import wait_for as wait_until

    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    template = factories.template(ws, channel="sms", publish_it=False)
    sign_in(page, "mia@example.com")
    page.goto(f"/w/{ws.id}/templates/{template.id}")
    replace_text(page, "Body", "Your code is 123456")
    page.get_by_role("textbox", name="From number").fill("+447700900123")
    expect(page.get_by_role("status")).to_have_text("Saved")
    page.get_by_role("button", name="Publish").click()
    expect(page.get_by_role("status")).to_have_text("Published: version 1 is live")
    with running_worker(live):
        page.get_by_role("textbox", name="Test recipient").fill("+44 7911 123456")
        click_when_ready(page, "Send test")
        expect(page.get_by_text("Test delivered to +447911123456.")).to_be_visible(
            timeout=15_000)
        (sms,) = wait_until(lambda: list(InboxMessage.select()), "the SMS in the inbox")
        assert sms.to == ["+447911123456"]


ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")
IN_WORDS = re.compile(r"\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} UTC")


def test_senders_and_the_audit_log_say_times_in_words(page: Page, zoned, zone):  # noqa: F811
    from engine.people import audit, users

    account = factories.account(name="Acme")
    ws = factories.workspace(account)
    make_user("ada@example.com", ws, "owner", "Ada")
    sign_in(page, "ada@example.com")
    page.goto(f"/w/{ws.id}/settings/senders")
    page.get_by_role("textbox", name="Domain").fill("acme.example")
    page.get_by_role("button", name="Add domain").click()
    pending = page.get_by_text("Publish these records at your DNS provider by")
    expect(pending).to_contain_text(IN_WORDS)
    assert not ISO.search(pending.inner_text())
    # DMARC is advice: absent, it is not "Failed".
    table = page.get_by_role("table", name="DNS records of acme.example")
    page.get_by_role("button", name="Check now").click()
    dmarc = table.get_by_role("row", name="_dmarc.acme.example")
    expect(dmarc).to_contain_text("Advised: not published")
    expect(dmarc).not_to_contain_text("Failed")
    expect(dmarc.get_by_role("button", name="Copy")).to_have_count(2)  # host and value
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 900})
        assert violations(page) == []

    expires = dt.datetime(2030, 2, 1)  # as the API keys page records a last day
    audit.record(ws, users.find("ada@example.com"), "api_key.created", "billing",
                 {"keyId": "1", "expiresAt": expires.isoformat()})
    page.goto(f"/w/{ws.id}/settings/audit-log")
    events = page.get_by_role("table")
    expect(events).to_contain_text(IN_WORDS)
    assert not ISO.search(events.inner_text()), events.inner_text()


def test_the_dev_inbox_is_styled_links_back_and_shows_sms_text(page: Page, live):
    from engine.database.models.inbox import InboxMessage

    InboxMessage.create(channel="sms", sender="+447700900123", to=["+447911123456"], cc=[],
                        bcc=[], subject=None, text="Your code is 123456", html=None,
                        raw=None, headers={})
    page.goto("/dev/inbox")
    messages = page.get_by_role("region", name="Messages")
    expect(messages.get_by_text("Your code is 123456")).to_be_visible()  # not folded away
    expect(messages).to_contain_text(IN_WORDS)
    assert not ISO.search(messages.inner_text())
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 900})
        assert violations(page) == []
    page.get_by_role("link", name="Back to Herald").click()
    expect(page.get_by_role("button", name="Sign in", exact=True)).to_be_visible()


def test_the_only_owner_is_offered_no_role_change_nor_leave(page: Page, live):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "owner", "Ada")
    make_user("bob@example.com", ws, "admin", "Bob")
    sign_in(page, "ada@example.com")
    page.goto(f"/w/{ws.id}/settings/members")
    expect(page.get_by_role("combobox", name="Access level of ada@example.com")).to_have_count(0)
    expect(page.get_by_role("button", name="Leave workspace")).to_have_count(0)
    expect(page.get_by_text("The only Owner")).to_be_visible()
    page.get_by_role("combobox", name="Access level of bob@example.com").select_option("owner")
    page.get_by_role("button", name="Change role of bob@example.com").click()
    # Two Owners: either may step down or leave.
    expect(page.get_by_role("combobox", name="Access level of ada@example.com")).to_be_visible()
    expect(page.get_by_role("button", name="Leave workspace")).to_be_visible()
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 900})
        assert violations(page) == []


def test_restore_is_offered_on_previous_versions_not_the_live_one(page: Page, live):
    from tests.web.authoring_support import replace_text

    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    template = factories.template(ws)  # version 1 live
    sign_in(page, "mia@example.com")
    page.goto(f"/w/{ws.id}/templates/{template.id}")
    expect(page.get_by_role("button", name="Restore version 1")).to_have_count(0)
    replace_text(page, "Body", "<p>Hello again {{name}}</p>")
    expect(page.get_by_role("status")).to_have_text("Saved")
    page.get_by_role("button", name="Publish").click()
    expect(page.get_by_role("status")).to_have_text("Published: version 2 is live")
    page.reload()
    expect(page.get_by_role("button", name="Restore version 1")).to_be_visible()
    expect(page.get_by_role("button", name="Restore version 2")).to_have_count(0)


def test_send_one_message_goes_through_the_worker_and_counts_in_reports(page: Page, live):
    from engine.database.models import Notification
    from engine.database.models.inbox import InboxMessage
    from tests.web.authoring_support import running_worker
    from tests.web.authoring_support import wait_for as wait_until
    from tests.web.test_reports_page import count

    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    template = factories.template(ws, defaults={"to": ["team@example.com"]})  # uses {{name}}
    sign_in(page, "mia@example.com")
    page.goto(f"/w/{ws.id}/templates/{template.id}")
    page.get_by_role("link", name="Send one message").click()
    recipient = page.get_by_role("textbox", name="Recipient")
    recipient.fill("not an address")
    page.get_by_role("textbox", name="name").fill("Ada")
    page.get_by_role("button", name="Send").click()
    expect(recipient).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_role("alert")).to_contain_text("nothing was sent")
    expect(page.get_by_role("textbox", name="name")).to_have_value("Ada")  # kept
    assert Notification.select().count() == 0
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 900})
        assert violations(page) == []
    with running_worker(live):
        recipient.fill("ada@example.net")
        page.get_by_role("button", name="Send").click()
        expect(page.get_by_role("heading", name="Notification")).to_be_visible()
        (mail,) = wait_until(lambda: list(InboxMessage.select()), "the message in the inbox")
        assert mail.to == ["ada@example.net"] and mail.subject == "Hi Ada"  # not the default
        wait_until(lambda: Notification.get().status == "delivered", "the delivery")
    (sent,) = Notification.select()
    assert not sent.is_test
    page.goto(f"/w/{ws.id}/reports/")
    assert count(page, "Accepted") == 1 and count(page, "Delivered") == 1


def test_update_preview_after_a_bad_sample_keeps_it_and_says_why(page: Page, live):
    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    template = factories.template(ws)
    sign_in(page, "mia@example.com")
    page.goto(f"/w/{ws.id}/templates/{template.id}")
    sample = page.get_by_role("textbox", name="Sample tags")
    sample.fill('{"name": "Ada"')
    expect(page.locator("#sample-error")).to_contain_text("Sample tags")  # the live preview
    page.get_by_role("button", name="Update preview").click()
    expect(sample).to_have_value('{"name": "Ada"')
    expect(sample).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#sample-error")).to_contain_text("Sample tags")
    assert violations(page) == []


def test_an_edit_handed_over_behind_the_pages_own_slower_save_is_kept(page: Page, live):
    """On a busy machine the page's autosave was still on its way when the page was left:
    it landed first, and the hand-over (a keepalive request made from the revision before)
    was refused as a conflict, the last edit lost. Here the page sends both as it does, in
    that order (its form as JSON, the second with keepalive), from the same basis."""
    from engine.catalog import versions
    from engine.database.models import Template
    from tests.web.authoring_support import replace_text

    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    template = factories.template(ws)
    sign_in(page, "mia@example.com")
    page.goto(f"/w/{ws.id}/templates/{template.id}")
    replace_text(page, "Body", "<p>First</p>")
    expect(page.get_by_role("status").filter(has_text="Saved")).to_have_count(1)
    statuses = page.evaluate("""async (texts) => {
        const form = document.getElementById("editor");
        const token = JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"];
        const answers = [];
        for (const [i, text] of texts.entries()) {
            const fields = {};
            new FormData(form).forEach((v, k) => { if (!(k in fields)) fields[k] = v; });
            fields.body = text;
            const answer = await fetch(form.getAttribute("hx-post"), {method: "POST",
                body: JSON.stringify(fields), keepalive: i === 1, credentials: "same-origin",
                headers: {"Content-Type": "application/json", "X-CSRFToken": token,
                          "HX-Request": "true"}});
            answers.push((await answer.text()).includes("conflicted") ? "refused" : "saved");
        }
        return answers;
    }""", ["<p>First</p><p>more</p>", "<p>First</p><p>more</p><p>and the last</p>"])
    assert statuses == ["saved", "saved"]
    draft = versions.current_draft(Template.get_by_id(template.id))
    assert draft.content["body"] == "<p>First</p><p>more</p><p>and the last</p>"
    # Another page (another tab) from that old basis is still told of the conflict.
    other = page.context.new_page()
    other.goto(f"/w/{ws.id}/templates/{template.id}")
    other.evaluate("""() => { document.getElementById("basis").value =
        document.getElementById("basis").value.replace(/:\\d+$/, ":1"); }""")
    replace_text(other, "Body", "<p>Elsewhere</p>")
    expect(other.locator("#autosave.conflicted")).to_have_count(1)


def test_compare_marks_changed_words_and_restores_this_version(page: Page, live):
    from engine.catalog import versions
    from engine.database.models import Template
    from tests.web.authoring_support import replace_text

    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    template = factories.template(ws)  # version 1 live: <p>Hello {{name}}</p>
    sign_in(page, "mia@example.com")
    page.goto(f"/w/{ws.id}/templates/{template.id}")
    replace_text(page, "Body", "<p>Goodbye {{name}}</p>")
    expect(page.get_by_role("status")).to_have_text("Saved")
    page.get_by_role("button", name="Publish").click()
    expect(page.get_by_role("status")).to_have_text("Published: version 2 is live")
    page.goto(f"/w/{ws.id}/templates/{template.id}/compare?a=1&b=2")
    body = page.get_by_role("region", name="Body changed")
    expect(body.locator("del")).to_have_text(["Hello"])
    expect(body.locator("ins")).to_have_text(["Goodbye"])
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 900})
        assert violations(page) == []
    page.get_by_role("button", name="Restore this version").click()
    expect(page.get_by_role("status")).to_contain_text("Version 1 restored")
    draft = versions.current_draft(Template.get_by_id(template.id))
    assert draft.content["body"] == "<p>Hello {{name}}</p>"


def test_the_template_list_has_a_search(page: Page, live):
    from engine.authoring import hierarchy

    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    project = hierarchy.create_project(ws, "Onboarding")
    folder = hierarchy.create_folder(project, None, "Day one")
    for name in ("Welcome email", "Password reset", "Welcome back SMS"):
        hierarchy.create_template(project, folder, name, "email")
    sign_in(page, "mia@example.com", start=f"/w/{ws.id}/templates")
    page.get_by_role("searchbox", name="Search templates").fill("welcome")
    page.get_by_role("button", name="Search", exact=True).click()
    results = page.get_by_role("region", name="Templates named like “welcome”")
    expect(results.get_by_role("link")).to_have_text(["Welcome back SMS", "Welcome email",
                                                      "Show every template"])
    expect(results).to_contain_text("Onboarding / Day one")
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 900})
        assert violations(page) == []
    page.get_by_role("searchbox", name="Search templates").fill("100%_")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.get_by_text("No template's name holds “100%_”.")).to_be_visible()



def test_focus_goes_to_what_happened_after_create_publish_and_restore(page: Page, live):
    from tests.web.authoring_support import replace_text

    ws = factories.workspace()
    make_user("mia@example.com", ws, "member")
    template = factories.template(ws)  # version 1 live
    sign_in(page, "mia@example.com")
    page.goto(f"/w/{ws.id}/projects/{template.project.id}")
    page.get_by_role("button", name="New template").click()
    page.get_by_role("textbox", name="Name").fill("Receipt")
    page.get_by_role("button", name="Create").click()
    status = page.locator("#save-status")
    expect(status).to_contain_text("Created Receipt")
    expect(status).to_be_focused()
    page.goto(f"/w/{ws.id}/templates/{template.id}")
    replace_text(page, "Body", "<p>Thank you {{name}}</p>")
    expect(status).to_have_text("Saved")
    page.get_by_role("button", name="Publish").click()
    expect(status).to_have_text("Published: version 2 is live")
    expect(status).to_be_focused()
    page.get_by_role("button", name="Restore version 1").click()
    expect(status).to_contain_text("Version 1 restored")
    expect(status).to_be_focused()
