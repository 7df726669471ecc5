"""Topics and the recipient's Email preferences page in Chromium: an Admin adds and removes
topics (Settings > Topics) and sets the SMS help text, an author names a Marketing email's
topic in the editor, a Member cannot change topics; the recipient's page, from the link a
delivered Marketing email carries, saves their topics and unsubscribes from all. Every page
axe-clean."""

from __future__ import annotations

import email
import re
from email import policy

import pytest
import requests
from playwright.sync_api import Page, expect

from engine import runtime
from engine.catalog import suppressions, topics
from engine.database.models import Suppression, TemplateVersion, Workspace
from engine.database.models.recipients import Topic
from engine.delivery import providers
from engine.delivery.jobs import deliver_notification
from engine.queue.embedded_redis import free_port
from tests import factories
from tests.support.smtp_server import start_smtp
from tests.web.axe import violations
from tests.web.conftest import csrf_token, make_user, sign_in


def test_admin_adds_and_removes_topics_and_sets_the_help_text(page: Page, live):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "admin", "Ada")
    sign_in(page, "ada@example.com")
    page.goto(f"/w/{ws.id}/settings")
    page.get_by_role("link", name="Topics").click()
    name = page.get_by_role("textbox", name="Name")
    name.fill("news letter")
    page.get_by_role("button", name="Add topic").click()
    expect(name).to_have_attribute("aria-invalid", "true")
    assert Topic.select().count() == 0
    name.fill("news")
    page.get_by_role("textbox", name="Description").fill("The monthly newsletter")
    page.get_by_role("button", name="Add topic").click()
    expect(page.get_by_role("status")).to_contain_text("Added the topic news")
    page.get_by_role("textbox", name="Name").fill("product")
    page.get_by_role("button", name="Add topic").click()
    expect(page.get_by_role("row", name="news")).to_contain_text("The monthly newsletter")
    assert violations(page) == []
    page.get_by_role("textbox", name="Name").fill("news")
    page.get_by_role("button", name="Add topic").click()
    expect(page.get_by_role("alert")).to_contain_text("already a topic named news")
    page.get_by_role("row", name="product").get_by_role("button", name="Remove").click()
    page.get_by_role("button", name="Remove").click()
    expect(page.get_by_role("status")).to_contain_text("Removed the topic product")
    assert topics.names(ws.id) == ["news"]
    page.get_by_role("textbox", name="SMS help text").fill("Acme alerts. Reply STOP to stop.")
    page.get_by_role("button", name="Save help text").click()
    expect(page.get_by_role("status")).to_contain_text("HELP is answered")
    assert Workspace.get_by_id(ws.id).sms_help_text == "Acme alerts. Reply STOP to stop."


def test_the_editor_names_a_marketing_emails_topic(page: Page, live):
    ws = factories.workspace()
    topics.add(ws.id, "news")
    template = factories.template(ws, content={"emailType": "Marketing"})
    make_user("mia@example.com", ws, "member", "Mia")
    sign_in(page, "mia@example.com")
    page.goto(f"/w/{ws.id}/templates/{template.id}")
    page.get_by_role("combobox", name="Topic").select_option("news")
    page.get_by_role("button", name="Save draft").click()
    expect(page.get_by_role("status").first).to_contain_text("Saved")
    draft = (TemplateVersion.select().where(TemplateVersion.template == template)
             .order_by(TemplateVersion.number.desc()).first())
    assert draft.content["topic"] == "news"


def test_a_member_cannot_change_topics(page: Page, live):
    ws = factories.workspace()
    make_user("max@example.com", ws, "member", "Max")
    sign_in(page, "max@example.com")
    assert page.goto(f"/w/{ws.id}/settings/topics").status == 403
    page.goto(f"/w/{ws.id}/settings")
    token = csrf_token(page)
    answer = page.request.post(f"/w/{ws.id}/settings/topics",
                               form={"csrf_token": token, "name": "news"})
    assert answer.status == 403
    assert Topic.select().count() == 0


@pytest.fixture
def smtp(live):
    controller, handler = start_smtp(free_port())
    runtime.configure(live.settings.with_changes(
        email_provider=f"smtp://127.0.0.1:{controller.port}?tls=none"))
    providers.close_all()
    yield handler
    providers.close_all()
    runtime.configure(live.settings)
    controller.stop()


def test_the_preferences_page_saves_topics_and_unsubscribes_from_all(page: Page, live, smtp):
    ws = factories.workspace()
    topics.add(ws.id, "news", "The monthly newsletter")
    topics.add(ws.id, "product")
    n = factories.notification(ws, factories.email_payload(
        to=["ada@example.net"], emailType="Marketing", topic="news"))
    assert deliver_notification(str(n.id)) == "delivered"
    message = email.message_from_bytes(smtp.received[-1].content, policy=policy.default)
    link = re.fullmatch(r"<(\S+)>", str(message["List-Unsubscribe"]).strip()).group(1)
    assert link.startswith(live.url)
    page.goto(link)  # no sign-in
    expect(page.get_by_role("heading", name="Email preferences")).to_be_visible()
    news = page.get_by_role("checkbox", name="news")
    expect(news).to_be_checked()
    expect(page.get_by_role("checkbox", name="product")).to_be_checked()
    assert violations(page) == []
    assert Suppression.select().count() == 0
    assert "script-src 'self'" in requests.get(link, timeout=10).headers[
        "Content-Security-Policy"]
    news.uncheck()
    page.get_by_role("button", name="Save preferences").click()
    expect(page.get_by_role("status")).to_contain_text("Your preferences are saved")
    expect(page.get_by_role("checkbox", name="news")).not_to_be_checked()
    expect(page.get_by_role("checkbox", name="product")).to_be_checked()
    assert [(r.scope, r.reason) for r in Suppression.select()] == [("topic:news",
                                                                    "unsubscribe")]
    page.get_by_role("button", name="Unsubscribe from all").click()
    expect(page.get_by_role("status")).to_contain_text("unsubscribed from all marketing")
    expect(page.get_by_role("checkbox", name="product")).not_to_be_checked()
    assert violations(page) == []
    assert suppressions.scopes_of(ws.id, "ada@example.net") == {
        "topic:news": "unsubscribe", "marketing": "unsubscribe"}
    page.goto(link + "x")
    expect(page.get_by_role("heading", name="This link has expired")).to_be_visible()


def test_the_reports_inbound_filter_shows_the_messages_people_sent_in(page: Page, live):
    from engine.database.models import utcnow
    from engine.database.models.recipients import InboundMessage

    ws = factories.workspace()
    make_user("mia@example.com", ws, "member", "Mia")
    InboundMessage.create(workspace=ws, provider="twilio", message_id="SM1",
                          sender="+14155550123", recipient="+15005550006", text="STOP",
                          keyword="stop", received_at=utcnow())
    sign_in(page, "mia@example.com")
    page.goto(f"/w/{ws.id}/reports/")
    page.get_by_role("checkbox", name="Inbound").check()
    page.get_by_role("button", name="Filter").click()
    table = page.get_by_role("table", name="Inbound messages")
    expect(table.get_by_role("row", name="+14155550123")).to_contain_text("STOP")
    assert violations(page) == []


def test_a_suppressions_csv_with_topic_scopes_imports_as_exported():
    import io

    from web.settings.csv_files import CsvRefused, read_rows

    rows = read_rows(io.BytesIO(b"address,scope\nAda@Example.net,topic:News\n"
                                b"bob@example.net,MARKETING\n"))
    assert rows == [("ada@example.net", "topic:News"), ("bob@example.net", "marketing")]
    with pytest.raises(CsvRefused) as refused:
        read_rows(io.BytesIO(b"address,scope\nada@example.net,topic:bad name\n"))
    assert "line 2" in str(refused.value) and "topic:NAME" in str(refused.value)
