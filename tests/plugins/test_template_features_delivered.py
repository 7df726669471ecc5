"""What template authors write reaches the mail aiosmtpd receives: a `<style>` rule inlined
into the element's `style` attribute (media queries kept in the head), and the language
variant the send's `locale` tag picks (`fr-CA` falls back to `fr`)."""

from __future__ import annotations

import email
import json
from email import policy

from cli.app import create_app
from engine.database.models import Notification
from engine.delivery.jobs import deliver_notification
from engine.reports.trace import trace
from tests import factories

SEND = "/api/v1/notifications/send"
PREVIEW = "/api/v1/notifications/preview"
HEAD = ("<style>p.lead { color: #c00; font-weight: bold }"
        " @media (max-width: 600px) { p.lead { font-size: 18px } }</style>")


def _deliver(client, ws, key, template, tags: dict[str, str]) -> email.message.EmailMessage:
    body = {"tenantId": str(ws.id), "templateId": str(template.id),
            "tags": [{"key": k, "value": v} for k, v in tags.items()]}
    response = client.post(SEND, data=json.dumps(body), content_type="application/json",
                           headers={"X-Api-Key": key})
    assert response.status_code == 202, response.json
    row = Notification.get(Notification.correlation_id == response.json["correlationId"])
    assert deliver_notification(str(row.id)) == "delivered"
    return row


def _arrived(smtp) -> email.message.EmailMessage:
    return email.message_from_bytes(smtp.received[-1].content, policy=policy.default)


def _html(message: email.message.EmailMessage) -> str:
    return next(p for p in message.walk() if p.get_content_type() == "text/html").get_content()


def test_a_style_rule_reaches_the_element_in_the_delivered_mail(smtp_settings, smtp):
    ws = factories.workspace()
    key = factories.api_key(ws)
    template = factories.template(ws, defaults={"to": ["ada@example.net"]}, content={
        "htmlHead": HEAD, "inlineCss": True,
        "body": "<p class=\"lead\" style=\"margin: 0\">Hello {{name}}</p><p>plain</p>"})
    _deliver(create_app(smtp_settings).test_client(), ws, key, template, {"name": "Ada"})
    html = _html(_arrived(smtp))
    assert 'style="color: #c00;font-weight: bold;margin: 0"' in html, html
    assert "@media (max-width: 600px)" in html.split("</head>")[0]
    assert "p.lead { color" not in html  # the rule itself left the <style> block


def test_without_inline_css_the_style_block_is_sent_as_written(smtp_settings, smtp):
    ws = factories.workspace()
    key = factories.api_key(ws)
    template = factories.template(ws, defaults={"to": ["ada@example.net"]}, content={
        "htmlHead": HEAD, "inlineCss": False, "body": "<p class=\"lead\">Hello</p>"})
    _deliver(create_app(smtp_settings).test_client(), ws, key, template, {})
    html = _html(_arrived(smtp))
    assert "p.lead { color: #c00" in html and 'class="lead">Hello' in html


def test_a_french_send_renders_fr_and_fr_ca_falls_back_to_fr(smtp_settings, smtp):
    ws = factories.workspace()
    key = factories.api_key(ws)
    template = factories.template(ws, defaults={"to": ["ada@example.net"]}, content={
        "subject": "Welcome {{name}}", "body": "<p>Hello {{name}}</p>",
        "variants": [{"locale": "fr", "subject": "Bienvenue {{name}}",
                      "body": "<p>Bonjour {{name}}</p>"},
                     {"locale": "fr-BE", "subject": "Bienvenue (BE) {{name}}"}]})
    client = create_app(smtp_settings).test_client()
    cases = [({"name": "Ada", "locale": "fr"}, "Bienvenue Ada", "Bonjour Ada", "fr"),
             ({"name": "Ada", "Locale": "fr-CA"}, "Bienvenue Ada", "Bonjour Ada", "fr"),
             ({"name": "Ada", "LOCALE": "FR-be"}, "Bienvenue (BE) Ada", "Hello Ada", "fr-BE"),
             ({"name": "Ada", "locale": "de"}, "Welcome Ada", "Hello Ada", None),
             ({"name": "Ada"}, "Welcome Ada", "Hello Ada", None)]
    for tags, subject, body, variant in cases:
        row = _deliver(client, ws, key, template, tags)
        message = _arrived(smtp)
        assert message["Subject"] == subject, tags
        assert body in _html(message), tags
        assert row.payload.get("variant") == variant, tags
        assert trace(row)["variant"] == variant  # what `herald notifications show` says
        preview = client.post(PREVIEW, content_type="application/json",
                              headers={"X-Api-Key": key}, data=json.dumps({
                                  "tenantId": str(ws.id), "templateId": str(template.id),
                                  "tags": [{"key": k, "value": v} for k, v in tags.items()]}))
        assert preview.status_code == 200, preview.json
        email_preview = preview.json["email"]
        assert email_preview["templateMetadata"]["variant"] == variant
        assert email_preview["renderedContent"]["subject"] == subject
        assert email_preview["variableMetadata"]["unusedVariables"] == []  # locale is used
