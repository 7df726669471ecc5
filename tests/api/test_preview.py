from __future__ import annotations

import base64
import json

from engine.database.models import Container, Notification, Project, Suppression
from engine.delivery.tracking import unsubscribe_url
from tests import factories

PREVIEW = "/api/v1/notifications/preview"
MEMBERS = {"success", "templateMetadata", "sender", "recipients", "renderedContent",
           "finalBodies", "variableMetadata", "batchingInfo", "attachments",
           "trackingSettings", "customHeaders", "renderingErrors", "errorMessage"}


def _preview(client, body, key):
    return client.post(PREVIEW, data=json.dumps(body), content_type="application/json",
                       headers={"X-Api-Key": key})


def test_preview_returns_every_member_and_queues_nothing(client, tenant, settings):
    body = {**tenant["body"], "tags": [{"key": "NAME", "value": "Ada"},
                                       {"key": "extra", "value": "x"}],
            "emailOptions": {"trackOpens": True, "customHeaders": {"X-Campaign": "s"},
                             "attachments": [{"name": "a.pdf", "contentType": "application/pdf",
                                              "content": base64.b64encode(b"12345").decode(),
                                              "cid": None}]}}
    response = _preview(client, body, tenant["key"])
    assert response.status_code == 200, response.json
    result = response.json["email"]
    assert set(result) == MEMBERS
    assert result["success"] is True
    assert result["renderedContent"]["subject"] == "Hi Ada"
    assert result["finalBodies"]["htmlBody"].startswith("<!DOCTYPE html>")
    assert "/t/o/" in result["finalBodies"]["htmlBody"]
    assert "Hello Ada" in result["finalBodies"]["textBody"]
    assert result["trackingSettings"] == {"trackOpens": True, "trackClicks": False}
    assert result["attachments"] == [{"name": "a.pdf", "contentType": "application/pdf",
                                      "sizeBytes": 5, "contentId": None}]
    assert result["customHeaders"] == {"X-Campaign": "s"}
    assert result["variableMetadata"]["unusedVariables"] == ["extra"]
    assert result["batchingInfo"] == {"emailType": "Transactional", "messageCount": 1,
                                      "batchingStrategy": "single-message"}
    assert Notification.select().count() == 0


def test_recipients_follow_d4(client, settings):
    ws = factories.workspace()
    tpl = factories.template(ws, defaults={"to": ["t@example.com"], "bcc": ["B@example.com"]})
    project = tpl.project
    Project.update(defaults={"to": ["p@example.com"], "bcc": ["b@example.com"]}).where(
        Project.id == project.id).execute()
    outer = Container.create(project=project, name="outer", defaults={"cc": ["o@example.com"]})
    inner = Container.create(project=project, parent=outer, name="inner",
                             defaults={"to": ["i@example.com", "P@example.com"]})
    tpl.container = inner
    tpl.save()
    key = factories.api_key(ws)
    body = {"tenantId": str(ws.id), "templateId": str(tpl.id), "tags": [],
            "emailOptions": {"to": ["extra@example.com", "t@example.com"]}}
    recipients = _preview(client, body, key).json["email"]["recipients"]
    assert recipients == {"to": ["p@example.com", "i@example.com", "t@example.com",
                                 "extra@example.com"],
                          "cc": ["o@example.com"], "bcc": ["b@example.com"],
                          "wasOverridden": False}
    body["emailOptions"]["overrideRecipients"] = ["only@example.com"]
    body["emailOptions"]["cc"] = ["c@example.com"]
    recipients = _preview(client, body, key).json["email"]["recipients"]
    assert recipients == {"to": ["only@example.com", "extra@example.com", "t@example.com"],
                          "cc": ["c@example.com"], "bcc": [], "wasOverridden": True}


def test_suppressed_recipients_are_reported(client, tenant):
    Suppression.create(workspace=tenant["ws"], address="team@example.com")
    body = {**tenant["body"], "emailOptions": {"to": ["x@example.com"]}}
    response = _preview(client, body, tenant["key"]).json
    assert response["email"]["recipients"]["to"] == ["x@example.com"]
    assert any("team@example.com" in e["message"] for e in response["validationErrors"])
    assert response["email"]["batchingInfo"]["messageCount"] == 1
    # Every recipient suppressed: a send would deliver no message at all.
    alone = _preview(client, tenant["body"], tenant["key"]).json["email"]
    assert alone["recipients"]["to"] == [] and alone["batchingInfo"]["messageCount"] == 0


def test_an_unsubscribe_is_reported_by_the_next_marketing_preview_only(client, tenant):
    marketing = factories.template(tenant["ws"], content={"emailType": "Marketing"})
    body = {**tenant["body"], "templateId": str(marketing.id),
            "emailOptions": {"to": ["ada@example.net"]}}
    first = _preview(client, body, tenant["key"]).json
    assert "ada@example.net" in first["email"]["recipients"]["to"]
    n = factories.notification(tenant["ws"], factories.email_payload(
        to=["ada@example.net"], emailType="Marketing"))
    path = unsubscribe_url(str(n.id), "Ada@Example.net").replace("http://herald.test", "")
    assert client.post(path, data="List-Unsubscribe=One-Click",
                       content_type="application/x-www-form-urlencoded").status_code == 200
    again = _preview(client, body, tenant["key"]).json
    assert "ada@example.net" not in again["email"]["recipients"]["to"]
    assert any("ada@example.net" in e["message"] for e in again["validationErrors"])
    # The unsubscribe stops Marketing email only: a Transactional preview still reaches her.
    transactional = {**tenant["body"], "emailOptions": {"to": ["ada@example.net"]}}
    kept = _preview(client, transactional, tenant["key"]).json
    assert "ada@example.net" in kept["email"]["recipients"]["to"]
    assert not any("ada@example.net" in e["message"] for e in kept["validationErrors"])


def test_marketing_batching_counts_one_message_per_recipient(client, settings):
    ws = factories.workspace()
    tpl = factories.template(ws, content={"emailType": "Marketing"},
                             defaults={"to": ["a@example.com", "b@example.com"]})
    body = {"tenantId": str(ws.id), "templateId": str(tpl.id), "tags": []}
    info = _preview(client, body, factories.api_key(ws)).json["email"]["batchingInfo"]
    assert info["messageCount"] == 2 and info["emailType"] == "Marketing"


def test_rendering_errors_are_reported_per_part(client, settings):
    ws = factories.workspace()
    # 200 copies of an 8,000-character tag: over the 1,048,576-character part limit.
    tpl = factories.template(ws, content={"body": "{{big}}" * 200},
                             defaults={"to": ["a@example.com"]})
    body = {"tenantId": str(ws.id), "templateId": str(tpl.id),
            "tags": [{"key": "big", "value": "y" * 8000}]}
    result = _preview(client, body, factories.api_key(ws)).json["email"]
    assert result["success"] is False
    assert result["renderingErrors"][0]["templatePart"] == "body"
    assert result["finalBodies"] is None and result["errorMessage"]


def test_preview_of_a_non_email_template_is_unsupported(client, settings):
    ws = factories.workspace()
    tpl = factories.template(ws, channel="sms", defaults={"to": ["+14155550100"]})
    body = {"tenantId": str(ws.id), "templateId": str(tpl.id), "tags": []}
    response = _preview(client, body, factories.api_key(ws))
    assert response.status_code == 400
    assert response.json["errorCode"] == "notifications.unsupported_notification_type"


def test_a_from_address_given_with_a_name_is_reported_as_address_and_name(client, tenant):
    named = {**tenant["body"], "emailOptions": {"fromAddress": "Ops Team <ops@example.com>"}}
    sender = _preview(client, named, tenant["key"]).json["email"]["sender"]
    assert sender["fromAddress"] == "ops@example.com" and sender["fromName"] == "Ops Team"
    bare = {**tenant["body"], "emailOptions": {"fromAddress": "ops@example.com"}}
    sender = _preview(client, bare, tenant["key"]).json["email"]["sender"]
    assert sender["fromAddress"] == "ops@example.com" and sender["fromName"] == "Example"


HEAVY = "{{#each this}}{{#each @root}}{{uppercase this}}{{/each}}{{/each}}"


def _heavy(ws):
    tpl = factories.template(ws, content={"subject": HEAVY, "body": HEAVY, "htmlHead": HEAVY},
                             defaults={"to": ["a@example.com"]})
    return {"tenantId": str(ws.id), "templateId": str(tpl.id),
            "tags": [{"key": f"k{i}", "value": "v" * 100} for i in range(30)]}


def test_one_render_budget_covers_every_part_of_a_request(settings):
    """The budget is the request's, not each part's: spent, every part still to render fails
    (a preview answers renderingErrors, a send 400 rendering_failed)."""
    from cli.app import create_app

    ws = factories.workspace()
    body, key = _heavy(ws), factories.api_key(ws)
    roomy = create_app(settings.with_changes(render_budget_seconds=5.0)).test_client()
    assert _preview(roomy, body, key).json["email"]["success"] is True
    spent = create_app(settings.with_changes(render_budget_seconds=0.0)).test_client()
    result = _preview(spent, body, key).json["email"]
    assert result["success"] is False
    assert {e["templatePart"] for e in result["renderingErrors"]} == {
        "subject", "body", "htmlHead"}
    sent = spent.post("/api/v1/notifications/send", data=json.dumps(body),
                      content_type="application/json", headers={"X-Api-Key": key})
    assert sent.status_code == 400 and sent.json["errorCodes"] == [
        "notifications.rendering_failed"]
    assert Notification.select().count() == 0


def test_the_render_budget_is_set_from_the_environment():
    from config.settings import ConfigError, load_settings

    assert load_settings({}).render_budget_seconds == 0.5
    assert load_settings({"HERALD_RENDER_BUDGET_SECONDS": "0.25"}).render_budget_seconds == 0.25
    try:
        load_settings({"HERALD_RENDER_BUDGET_SECONDS": "60"})
    except ConfigError as err:
        assert err.setting == "HERALD_RENDER_BUDGET_SECONDS"
    else:
        raise AssertionError("a budget over 10 s must be refused")
