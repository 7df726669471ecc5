"""engine/authoring: the editor's preview (the API's renderer) and test sends."""

from __future__ import annotations

import pytest
from redis import Redis

from api.previews import preview_json
from engine.authoring import draft_sends, previews
from engine.authoring.draft_sends import SendTestRefused
from engine.catalog import keycache
from engine.database.models import Notification, TemplateVersion
from engine.database.models.inbox import InboxMessage
from engine.delivery.jobs import deliver_notification
from engine.queue.queueing import QUEUE_NAME
from engine.sending import allowance
from engine.sending.preview import build_preview
from engine.sending.resolution import resolve_request
from tests import factories

TAGS = {"name": "Ada <3"}


@pytest.fixture
def ws(settings):
    return factories.workspace()


def _live(template):
    return TemplateVersion.get(TemplateVersion.template == template,
                               TemplateVersion.status == "live")


def test_the_preview_of_the_live_text_is_the_apis_preview(ws):
    template = factories.template(ws, content={"trackClicks": True, "body":
                                               '<p>Hi {{name}} <a href="https://x.example">x</a>'
                                               "</p>"}, defaults={"to": ["t@example.com"]})
    live = _live(template)
    key = keycache.lookup(factories.api_key(ws))
    body = {"tenantId": str(ws.id), "templateId": str(template.id),
            "tags": [{"key": "name", "value": "Ada <3"}]}
    api = preview_json(build_preview(resolve_request(body, key, preview=True)))["email"]
    mine = previews.preview(ws, template, dict(live.content), TAGS)
    assert mine.subject == api["renderedContent"]["subject"] == "Hi Ada <3"
    assert mine.html == api["finalBodies"]["htmlBody"]
    assert mine.text == api["finalBodies"]["textBody"]
    assert "Ada &lt;3" in mine.html and mine.errors == []
    assert mine.recipients.to == ["t@example.com"]
    assert (mine.used, mine.missing, mine.unused) == (["name"], [], [])


def test_unsaved_text_is_previewed_without_writing_anything(ws):
    template = factories.template(ws)
    live = _live(template)
    before = [(v.id, v.content) for v in TemplateVersion.select()]
    edited = {**live.content, "subject": "New {{orderId}}", "body": "<b>{{name}}</b>"}
    result = previews.preview(ws, template, edited, {"name": "Ada", "other": "x"})
    assert result.subject == "New " and "<b>Ada</b>" in result.html
    assert (result.used, result.missing, result.unused) == (["name", "orderId"], ["orderId"],
                                                            ["other"])
    assert [(v.id, v.content) for v in TemplateVersion.select()] == before
    # The same text again renders from the cache; a changed text never shows the old one.
    assert "<b>Ada</b>" in previews.preview(ws, template, edited, {"name": "Ada"}).html
    changed = {**edited, "body": "<i>{{name}}</i>"}
    assert "<i>Ada</i>" in previews.preview(ws, template, changed, {"name": "Ada"}).html


def test_a_syntax_error_is_shown_with_its_line_and_column(ws):
    template = factories.template(ws)
    broken = {**_live(template).content, "body": "<p>ok</p>\n<p>{{#each items}}\n"}
    result = previews.preview(ws, template, broken, {})
    (problem,) = result.errors
    assert (problem.field, problem.line) == ("body", 2)
    assert "line 2, column" in problem.message
    assert result.html is None
    media, document = result.frame()
    assert media == "text/plain" and "line 2" in document


def test_sms_and_webhook_previews_render_as_their_sends_do(ws):
    sms = factories.template(ws, "sms")
    result = previews.preview(ws, sms, _live(sms).content, {"code": "<42>"})
    assert (result.text, result.frame()) == ("Code <42>", ("text/plain", "Code <42>"))
    hook = factories.template(ws, "webhook")
    content = {**_live(hook).content, "body": '{"id": {{id}} }'}
    bad = previews.preview(ws, hook, content, {"id": "not json"})
    assert [p.field for p in bad.errors] == ["body"] and "not valid JSON" in \
        bad.errors[0].message
    good = previews.preview(ws, hook, _live(hook).content, {"id": 'a"b'})
    assert good.text == '{"id": "a\\"b"}' and good.errors == []


def test_an_unverified_from_address_is_a_preview_warning(ws):
    template = factories.template(ws)
    content = {**_live(template).content, "fromAddress": "ops@elsewhere.example"}
    result = previews.preview(ws, template, content, {})
    assert any("not a verified sender" in w for w in result.warnings)


def test_a_test_send_runs_the_pipeline_flagged_and_counts_against_nothing(ws, settings):
    template = factories.template(ws, content={"trackOpens": True, "trackClicks": True,
                                               "body": '<p>{{name}} <a href="https://x.example/'
                                                       '">go</a></p>'},
                                  defaults={"to": ["team@example.com"],
                                            "bcc": ["audit@example.com"]})
    draft = {**_live(template).content, "subject": "Draft {{name}}"}
    sent = draft_sends.send_test(ws, template, draft, TAGS, "me@example.net", 2)
    assert sent.is_test and sent.status == "queued" and sent.version_number == 2
    assert sent.payload["to"] == ["me@example.net"] and sent.payload["bcc"] == []
    assert sent.payload["headers"]["X-SVC-Test"] == "true"
    assert not sent.payload["trackOpens"] and not sent.payload["trackClicks"]
    redis = Redis.from_url(settings.redis_url)
    assert redis.lrange(f"rq:queue:{QUEUE_NAME}", 0, -1) == [str(sent.id).encode()]
    assert allowance.used_this_month(str(ws.account_id)) == 0
    assert not redis.exists(allowance.key(str(ws.account_id)))
    assert deliver_notification(str(sent.id)) == "delivered"
    (message,) = InboxMessage.select()
    assert message.subject == "Draft Ada <3" and message.to == ["me@example.net"]
    assert message.headers["X-SVC-Test"] == "true"
    assert "https://x.example/" in message.html and "/t/" not in message.html
    outcome = draft_sends.outcome(ws, template, sent.id)
    assert (outcome.status, outcome.final, outcome.recipient) == (
        "delivered", True, "me@example.net")
    assert draft_sends.outcome(factories.workspace(), template, sent.id) is None


def test_a_webhook_test_is_flagged_in_a_header_no_request_can_set(ws):
    hook = factories.template(ws, "webhook")
    sent = draft_sends.send_test(ws, hook, _live(hook).content, {"id": "7"},
                                "https://127.0.0.1/hook")
    assert sent.payload["headers"] == {"X-Service-Test": "true"}
    assert sent.payload["url"] == "https://127.0.0.1/hook" and sent.payload["body"] == \
        '{"id": "7"}'


@pytest.mark.parametrize("channel,recipient,content,message", [
    ("email", "not an address", {}, "Test recipient"),
    ("email", "me@example.net", {"fromAddress": "x@unverified.example"}, "verified sender"),
    ("email", "me@example.net", {"body": "{{#if}}"}, "Body: line 1"),
    ("sms", "0123", {}, "E.164"),
    ("webhook", "http://example.com/hook", {}, "Test recipient"),
    ("webhook", "", {}, "https:// URL"),
])
def test_a_test_send_that_cannot_go_says_why_and_queues_nothing(
        ws, channel, recipient, content, message):
    template = factories.template(ws, channel)
    with pytest.raises(SendTestRefused, match=message):
        draft_sends.send_test(ws, template, {**_live(template).content, **content}, {},
                             recipient)
    assert not Notification.select().exists()


def test_webhook_tests_need_the_plan_that_delivers_webhooks(settings):
    ws = factories.workspace(factories.account(webhook_delivery=False))
    hook = factories.template(ws, "webhook")
    with pytest.raises(SendTestRefused, match="plan"):
        draft_sends.send_test(ws, hook, _live(hook).content, {}, "https://127.0.0.1/h")


def test_test_sends_are_limited_per_workspace_and_minute(ws):
    template = factories.template(ws)
    content = _live(template).content
    for _ in range(draft_sends.TEST_SENDS_PER_MINUTE):
        draft_sends.send_test(ws, template, content, {}, "me@example.net")
    with pytest.raises(SendTestRefused, match="test sends a minute"):
        draft_sends.send_test(ws, template, content, {}, "me@example.net")
    assert Notification.select().count() == draft_sends.TEST_SENDS_PER_MINUTE
