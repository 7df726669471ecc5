"""Issue 25's "Done when", in Chromium: a Member creates an email template under a folder,
types into the editor, sees Saved and the preview, publishes; an API send with that id
delivers the published text through a real worker; a test send arrives flagged test;
Restore of version 1 after publishing version 2 gives a draft with version 1's text; and
`herald export` then `herald apply` of what the browser made changes nothing."""

from __future__ import annotations

import requests
from playwright.sync_api import Page, expect

from engine.database.models import Notification, Template, TemplateVersion
from engine.database.models.inbox import InboxMessage
from engine.sending import allowance
from tests import factories
from tests.web.authoring_support import (
    click_when_ready,
    code_text,
    herald,
    replace_text,
    running_worker,
    wait_for,
)
from tests.web.conftest import make_user, sign_in


def _create(page: Page, button: str, name: str, channel: str | None = None) -> None:
    page.get_by_role("button", name=button).click()
    page.get_by_role("textbox", name="Name").fill(name)
    if channel:
        page.get_by_role("combobox", name="Channel").select_option(label=channel)
    page.get_by_role("button", name="Create").click()


def _inbox(subject: str) -> list[InboxMessage]:
    return list(InboxMessage.select().where(InboxMessage.subject == subject))


def test_done_when(page: Page, live):
    ws = factories.workspace()  # its account has verified the domain example.com
    make_user("mia@example.com", ws, "member", "Mia")
    key = factories.api_key(ws)
    sign_in(page, "mia@example.com")

    # Project > folder > template, each through its button, Name and Create.
    _create(page, "New project", "Onboarding")
    expect(page.get_by_role("heading", name="Onboarding")).to_be_visible()
    _create(page, "New folder", "Emails")
    expect(page.get_by_role("heading", name="Emails")).to_be_visible()
    _create(page, "New template", "Welcome", "Email")
    template = Template.get(Template.name == "Welcome")
    assert template.container.name == "Emails" and template.project.name == "Onboarding"
    expect(page.get_by_text(str(template.id), exact=True)).to_be_visible()

    # Typing: the draft is saved shortly after, and the preview shows the text rendered.
    status = page.get_by_role("status")
    page.get_by_role("textbox", name="Subject").fill("Welcome {{name}}")
    replace_text(page, "Body", "<h1>Hello {{name}}</h1><p>Glad you are here.</p>")
    page.get_by_role("textbox", name="From address").fill("hello@example.com")
    page.get_by_role("textbox", name="From name").fill("Acme")
    expect(status).to_have_text("Saved")
    page.get_by_role("textbox", name="Sample tags").fill('{"name": "Ada"}')
    frame = page.frame_locator('iframe[title="Preview"]')
    expect(frame.get_by_role("heading", name="Hello Ada")).to_be_visible()
    expect(page.get_by_text("Welcome Ada", exact=True)).to_be_visible()
    expect(page.locator("pre.plain-text")).to_contain_text("Glad you are here.")
    draft = TemplateVersion.get(TemplateVersion.template == template)
    assert (draft.status, draft.content["body"]) == (
        "draft", "<h1>Hello {{name}}</h1><p>Glad you are here.</p>")

    page.get_by_role("button", name="Publish").click()
    expect(status).to_have_text("Published: version 1 is live")
    expect(page.get_by_role("row", name="1 Live")).to_be_visible()

    with running_worker(live):
        # An API send by the template's id delivers the published text.
        sent = requests.post(f"{live.url}/api/v1/notifications/send", timeout=10,
                             headers={"X-Api-Key": key},
                             json={"tenantId": str(ws.id), "templateId": str(template.id),
                                   "tags": [{"key": "name", "value": "Grace"}],
                                   "emailOptions": {"to": ["grace@example.net"]}})
        assert sent.status_code == 202, sent.text
        (message,) = wait_for(lambda: _inbox("Welcome Grace"), "the API send in the inbox")
        assert "<h1>Hello Grace</h1>" in message.html and message.to == ["grace@example.net"]
        assert message.headers["From"] == "Acme <hello@example.com>"

        # A test send arrives flagged test, and the editor says so within seconds.
        page.get_by_role("textbox", name="Test recipient").fill("mia@example.net")
        click_when_ready(page, "Send test")
        expect(page.get_by_text("Test delivered to mia@example.net.")).to_be_visible(
            timeout=15_000)
        (test,) = _inbox("Welcome Ada")
        assert test.headers["X-SVC-Test"] == "true" and test.to == ["mia@example.net"]
        flagged = Notification.get(Notification.id == test.notification_id)
        assert flagged.is_test and flagged.status == "delivered"
        assert allowance.used_this_month(str(ws.account_id)) == 1  # the API send alone

    # Version 2, then Restore of version 1: a draft with version 1's text.
    replace_text(page, "Body", "<h1>Version two for {{name}}</h1>")
    expect(status).to_have_text("Saved")
    page.get_by_role("button", name="Publish").click()
    expect(status).to_have_text("Published: version 2 is live")
    expect(page.get_by_role("row", name="1 Previous")).to_be_visible()
    page.get_by_role("row", name="1 Previous").get_by_role("button", name="Restore").click()
    expect(status).to_contain_text("Version 1 restored")
    expect(page.get_by_role("row", name="3 Draft")).to_be_visible()
    assert code_text(page, "body") == "<h1>Hello {{name}}</h1><p>Glad you are here.</p>"
    assert TemplateVersion.get(TemplateVersion.template == template,
                               TemplateVersion.number == 3).content == draft.content | {}
    expect(frame.get_by_role("heading", name="Hello Ada")).to_be_visible()

    # The browser and `herald apply` agree: applying the export changes nothing.
    exported = herald(live, "export", "--workspace", str(ws.id))
    outcome = herald(live, "apply", "-", stdin=__import__("json").dumps(exported))
    assert outcome["changed"] is False, outcome
    assert herald(live, "export", "--workspace", str(ws.id)) == exported
