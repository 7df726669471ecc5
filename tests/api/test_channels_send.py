"""Send over each channel: the persisted payload the worker reads, and the SMS rules."""

from __future__ import annotations

import base64
import dataclasses
import json
import time

from cli.app import create_app
from engine.catalog import keycache, snapshots
from engine.catalog.keys import revoke_key
from engine.database.models import ApiKey, Notification, TemplateVersion
from tests import factories

SEND = "/api/v1/notifications/send"
VALIDATE = "/api/v1/api-keys/validate"
EMAIL_KEYS = {"channel", "emailType", "from", "replyTo", "to", "cc", "bcc", "subject", "html",
              "text", "headers", "attachments", "trackOpens", "trackClicks", "priority",
              "sensitivity", "requestReadReceipt", "requestDeliveryReceipt", "suppressionKeys"}


def post(client, body, key):
    return client.post(SEND, data=json.dumps(body), content_type="application/json",
                       headers={"X-Api-Key": key})


def _body(ws, tpl, **extra):
    return {"tenantId": str(ws.id), "templateId": str(tpl.id),
            "tags": [{"key": "name", "value": "Ada"}, {"key": "code", "value": "42"}], **extra}


def test_email_payload_has_exactly_the_worker_contract(client, settings):
    ws = factories.workspace()
    tpl = factories.template(ws, defaults={"to": ["team@example.com"], "cc": ["c@example.com"]},
                             content={"htmlHead": "<title>T</title>", "trackOpens": True})
    key = factories.api_key(ws)
    options = {"overrideRecipients": ["Ada <ada@example.com>"], "bcc": ["b@example.com"],
               "replyTo": "reply@example.com", "trackOpens": False, "trackClicks": True,
               "customHeaders": {"X-Campaign": "spring"}, "priority": "High",
               "requestReadReceipt": True,
               "attachments": [{"name": "a.txt", "contentType": "text/plain",
                                "content": base64.b64encode(b"hello").decode(), "cid": None}]}
    response = post(client, _body(ws, tpl, emailOptions=options), key)
    assert response.status_code == 202, response.json
    payload = Notification.get().payload
    assert set(payload) == EMAIL_KEYS
    assert payload["to"] == ["Ada <ada@example.com>"] and payload["cc"] == []
    assert payload["bcc"] == ["b@example.com"]
    assert payload["from"] == {"address": "hello@example.com", "name": "Example"}
    assert payload["html"].startswith("<!DOCTYPE html>")
    assert "<head><meta charset=\"utf-8\"><title>T</title></head>" in payload["html"]
    assert payload["text"] is None  # the worker derives the text part from the HTML
    assert (payload["trackOpens"], payload["trackClicks"]) == (False, True)
    assert payload["headers"] == {"X-Campaign": "spring"}
    assert payload["attachments"][0]["content"] == base64.b64encode(b"hello").decode()
    assert payload["priority"] == "High" and payload["requestReadReceipt"] is True


def test_sms_send_persists_e164_numbers_and_the_rendered_text(client, settings):
    ws = factories.workspace()
    tpl = factories.template(ws, channel="sms", defaults={"to": ["+14155550100"]})
    key = factories.api_key(ws)
    body = _body(ws, tpl, smsOptions={"to": ["+14155550101", "+14155550100"]})
    assert post(client, body, key).status_code == 202
    row = Notification.get()
    assert row.channel == "sms"
    assert row.payload == {"channel": "sms", "from": "+15005550006",
                           "to": ["+14155550100", "+14155550101"], "text": "Code 42",
                           "suppressionKeys": ["+14155550100", "+14155550101"]}


TRICKY = 'Tom & "Jerry" <x> C:\\temp\\new'


def test_each_part_escapes_a_value_for_its_own_language(client, settings):
    """HTML entities belong in HTML only: a subject and an SMS are plain text, a JSON
    webhook body keeps the value inside its string literal."""
    ws = factories.workspace(factories.account(webhook_delivery=True))
    key = factories.api_key(ws)
    tags = [{"key": "name", "value": TRICKY}, {"key": "code", "value": TRICKY},
            {"key": "id", "value": TRICKY}]
    email = factories.template(ws, defaults={"to": ["team@example.com"]})
    sms = factories.template(ws, channel="sms", defaults={"to": ["+14155550100"]})
    hook = factories.template(ws, channel="webhook")
    xml = factories.template(ws, channel="webhook", content={
        "body": "<v>{{id}}</v>", "contentType": "application/xml"})
    plain = factories.template(ws, channel="webhook", content={
        "body": "v={{id}}", "contentType": "text/plain; charset=utf-8"})
    url = {"urlOverride": "https://127.0.0.1/x"}  # the tests allow private destinations
    for tpl, extra in ((email, {}), (sms, {}), (hook, {"webhookOptions": url}),
                       (xml, {"webhookOptions": url}), (plain, {"webhookOptions": url})):
        body = {"tenantId": str(ws.id), "templateId": str(tpl.id), "tags": tags, **extra}
        response = post(client, body, key)
        assert response.status_code == 202, (tpl.channel, response.json)
    email_row, sms_row, hook_row, xml_row, plain_row = (
        Notification.get(Notification.template == tpl) for tpl in (email, sms, hook, xml, plain))
    assert email_row.payload["subject"] == f"Hi {TRICKY}"
    assert "<p>Hello Tom &amp; &quot;Jerry&quot; &lt;x&gt; C:\\temp\\new</p>" in \
        email_row.payload["html"]
    assert sms_row.payload["text"] == f"Code {TRICKY}"
    assert json.loads(hook_row.payload["body"]) == {"id": TRICKY}
    assert xml_row.payload["body"] == "<v>Tom &amp; &quot;Jerry&quot; &lt;x&gt; C:\\temp\\new</v>"
    assert plain_row.payload["body"] == f"v={TRICKY}"


def test_sms_override_replaces_the_defaults_and_from_number_overrides(client, settings):
    ws = factories.workspace()
    tpl = factories.template(ws, channel="sms", defaults={"to": ["+14155550100"]})
    key = factories.api_key(ws)
    body = _body(ws, tpl, smsOptions={"overrideRecipients": ["+442071838750"],
                                      "fromNumber": "+14155550199"})
    assert post(client, body, key).status_code == 202
    payload = Notification.get().payload
    assert payload["to"] == ["+442071838750"] and payload["from"] == "+14155550199"


def test_sms_rules_are_reported_together(client, settings):
    ws = factories.workspace()
    tpl = factories.template(ws, channel="sms", defaults={"to": ["+14155550100"]})
    key = factories.api_key(ws)
    body = _body(ws, tpl, smsOptions={"to": ["", "4155550100", "+1 415 555 0100"],
                                      "overrideRecipients": ["+1", " "],
                                      "fromNumber": "sender"})
    problem = post(client, body, key).json
    assert problem["errorCode"] == "notifications.validation_failed"
    assert {"notifications.sms.to_empty", "notifications.sms.to_invalid",
            "notifications.sms.override_recipient_invalid",
            "notifications.sms.override_recipient_empty",
            "notifications.sms.from_number_invalid"} <= set(problem["errorCodes"])
    assert "smsOptions.to[1]" in problem["errors"]
    many = {"to": [f"+1415555{i:04d}" for i in range(1001)]}
    codes = post(client, _body(ws, tpl, smsOptions=many), key).json["errorCodes"]
    assert "notifications.sms.too_many_recipients" in codes


def test_sms_template_without_any_number_is_to_empty(client, settings):
    ws = factories.workspace()
    tpl = factories.template(ws, channel="sms")
    key = factories.api_key(ws)
    problem = post(client, _body(ws, tpl), key).json
    assert problem["errorCodes"] == ["notifications.sms.to_empty"]
    assert Notification.select().count() == 0


def test_email_list_rules_for_cc_and_bcc(client, settings):
    ws = factories.workspace()
    tpl = factories.template(ws, defaults={"to": ["team@example.com"]})
    key = factories.api_key(ws)
    body = _body(ws, tpl, emailOptions={"cc": [""], "bcc": ["nope"]})
    codes = post(client, body, key).json["errorCodes"]
    assert {"notifications.email.cc_empty", "notifications.email.bcc_invalid"} <= set(codes)


def test_a_revocation_takes_effect_within_the_cache_window(settings):
    short = dataclasses.replace(settings, key_cache_seconds=0.2)
    keycache.clear()
    client = create_app(short).test_client()
    ws = factories.workspace()
    tpl = factories.template(ws, defaults={"to": ["team@example.com"]})
    key = factories.api_key(ws)
    assert post(client, _body(ws, tpl), key).status_code == 202
    revoke_key(ApiKey.get())
    deadline = time.monotonic() + 5
    status = 202
    while time.monotonic() < deadline:
        status = post(client, _body(ws, tpl), key).status_code
        if status == 401:
            break
        time.sleep(0.05)
    assert status == 401
    # The validate operation still resolves the revoked key (spec 4.3).
    answer = client.get(VALIDATE, headers={"X-Api-Key": key}).json
    assert answer["isValid"] is True and answer["status"] == "revoked"


def test_last_used_at_is_written_behind_once(client, settings):
    ws = factories.workspace()
    tpl = factories.template(ws, defaults={"to": ["team@example.com"]})
    key = factories.api_key(ws)
    assert ApiKey.get().last_used_at is None
    assert post(client, _body(ws, tpl), key).status_code == 202
    first = ApiKey.get().last_used_at
    assert first is not None
    assert post(client, _body(ws, tpl), key).status_code == 202
    assert ApiKey.get().last_used_at == first  # not rewritten within the minute


def test_concurrent_sends_are_each_committed_once(app, settings):
    """Sends from many threads at once: every 202 has its own durable row, none lost,
    none doubled."""
    import threading

    ws = factories.workspace()
    tpl = factories.template(ws, defaults={"to": ["team@example.com"]})
    key = factories.api_key(ws)
    statuses: list[int] = []

    def send_some() -> None:
        client = app.test_client()
        for _ in range(5):
            statuses.append(post(client, _body(ws, tpl), key).status_code)

    threads = [threading.Thread(target=send_some) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert statuses == [202] * 40
    rows = list(Notification.select())
    assert len(rows) == 40 and len({row.id for row in rows}) == 40
    assert len({row.delivery_id for row in rows}) == 40


def test_a_webhook_body_nested_too_deep_to_parse_is_a_rendering_error_not_a_500(client,
                                                                                 settings):
    ws = factories.workspace(factories.account(webhook_delivery=True))
    key = factories.api_key(ws)
    hook = factories.template(ws, channel="webhook", content={"body": '{"a": {{{x}}} }'})
    # 4,000 levels: within a tag value's 8,192 characters, past the JSON parser's stack.
    for value, message in (("[" * 4000 + "]" * 4000, "the rendered body nests JSON too deeply"),
                           ("[" * 4000, "the rendered body nests JSON too deeply"),
                           ("[1,", "the rendered body is not valid JSON")):
        body = {"tenantId": str(ws.id), "templateId": str(hook.id),
                "tags": [{"key": "x", "value": value}],
                "webhookOptions": {"urlOverride": "https://127.0.0.1/x"}}
        response = post(client, body, key)
        assert response.status_code == 400, response.json
        assert response.json["errorCodes"] == ["notifications.rendering_failed"]
        assert response.json["errors"] == {"template.body": [message]}
    assert Notification.select().count() == 0


def test_a_stored_template_the_loader_refuses_is_a_rendering_error_not_a_500(client,
                                                                              settings):
    # Published before the scanner counted `../`: the text holds 65, and so does its stored
    # program, which the loader refuses (at most 64).
    ws = factories.workspace()
    key = factories.api_key(ws)
    deep = factories.template(ws, content={"body": "<p>{{" + "../" * 64 + "name}}</p>"},
                              defaults={"to": ["a@example.com"]})
    version = TemplateVersion.get(TemplateVersion.template == deep)
    assert '["path",64' in version.compiled
    TemplateVersion.update(
        content={**version.content, "body": "<p>{{" + "../" * 65 + "name}}</p>"},
        compiled=version.compiled.replace('["path",64', '["path",65')).where(
        TemplateVersion.id == version.id).execute()
    snapshots.clear()
    body = {"tenantId": str(ws.id), "templateId": str(deep.id),
            "tags": [{"key": "name", "value": "Ada"}]}
    response = post(client, body, key)
    assert response.status_code == 400, response.json
    assert response.json["errorCodes"] == ["notifications.rendering_failed"]
    preview = client.post("/api/v1/notifications/preview", json=body,
                          headers={"X-Api-Key": key})
    assert preview.status_code == 200
    assert preview.json["email"]["renderingErrors"][0]["templatePart"] == "body"
