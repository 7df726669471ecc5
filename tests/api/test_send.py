from __future__ import annotations

import json

import pytest
from redis import Redis
from rq import Queue

from engine.catalog.keys import revoke_key
from engine.database.models import ApiKey, Notification
from tests import factories

SEND = "/api/v1/notifications/send"


def post(client, body, key, **headers):
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return client.post(SEND, data=data, content_type="application/json",
                       headers={"X-Api-Key": key, **headers} if key else headers)


def test_send_is_accepted_persisted_and_enqueued(client, tenant, settings):
    response = post(client, tenant["body"], tenant["key"])
    assert response.status_code == 202, response.json
    body = response.json
    assert body["accepted"] is True and body["message"]
    assert response.headers["X-Correlation-Id"] == body["correlationId"]
    row = Notification.get()
    assert row.status == "queued" and row.channel == "email"
    assert row.payload["subject"] == "Hi Ada"
    assert row.payload["to"] == ["team@example.com"]
    assert "<p>Hello Ada</p>" in row.payload["html"]
    queued = Queue("herald", connection=Redis.from_url(settings.redis_url)).job_ids
    assert queued == [str(row.id)]


def test_missing_and_invalid_and_revoked_keys_are_401(client, tenant):
    assert post(client, tenant["body"], None).json["errorCode"] == "api_keys.missing"
    assert post(client, tenant["body"], "hk_wrong").json["errorCode"] == "api_keys.invalid"
    revoke_key(ApiKey.get())
    response = post(client, tenant["body"], tenant["key"])
    assert response.status_code == 401 and response.json["errorCode"] == "api_keys.invalid"


@pytest.mark.parametrize("path", [SEND, "/api/v1/notifications/preview"])
def test_a_request_hashes_and_looks_up_its_key_once(client, tenant, monkeypatch, path):
    """The body's gate and admission share one look-up of the key (its answer then relies
    on the keys' generation in the admission's script, as a cached entry's does)."""
    from engine.catalog import keycache

    assert post(client, tenant["body"], tenant["key"]).status_code == 202  # cached, tagged
    hashed = []
    real = keycache.secrets.hash_api_key
    monkeypatch.setattr(keycache.secrets, "hash_api_key",
                        lambda value: hashed.append(value) or real(value))
    answer = client.post(path, json=tenant["body"], headers={"X-Api-Key": tenant["key"]})
    assert answer.status_code in (200, 202), answer.json
    assert hashed == [tenant["key"]]


def test_tenant_mismatch_and_foreign_template(client, tenant):
    other = factories.workspace()
    foreign = factories.template(other)
    body = {**tenant["body"], "tenantId": str(other.id)}
    response = post(client, body, tenant["key"])
    assert response.status_code == 403 and response.json["errorCode"] == "api_keys.tenant_mismatch"
    body = {**tenant["body"], "templateId": str(foreign.id)}
    response = post(client, body, tenant["key"])
    assert response.status_code == 404
    assert response.json["errorCode"] == "notifications.template_not_found"


def test_missing_null_and_malformed_bodies(client, tenant):
    for raw in (b"", b"null"):
        response = post(client, raw, tenant["key"])
        assert response.status_code == 400
        assert response.json["errorCode"] == "notifications.request_missing"
    for raw in (b"{not json", b"[1,2]", b'"text"', b"[" * 100000):
        response = post(client, raw, tenant["key"])
        assert response.status_code == 400, raw[:10]
        assert response.json["errorCode"] == "notifications.validation_failed"


def test_a_lone_surrogate_anywhere_is_a_400_and_nothing_is_written(client, tenant):
    body = tenant["body"]
    lone = "\ud800"
    bodies = [
        {**body, "tags": [{"key": "name", "value": lone}]},
        {**body, "emailOptions": {"customHeaders": {"X-A": lone}}},
        {**body, "emailOptions": {"customHeaders": {lone: "x"}}},
        {**body, "emailOptions": {"to": [f"{lone} <x@example.com>"]}},
        {**body, "emailOptions": {"replyTo": f"{lone} <x@example.com>"}},
        {**body, "emailOptions": {"attachments": [
            {"name": f"a{lone}.txt", "content": "eA==", "contentType": "text/plain"}]}},
        {**body, lone: 1},
    ]
    raws = [json.dumps(b).encode() for b in bodies]  # as \ud800 escapes
    raws.append(json.dumps(bodies[0], ensure_ascii=False).encode("utf-8", "surrogatepass"))
    raws.append(json.dumps(bodies[1]).encode("utf-16"))
    for raw in raws:
        response = post(client, raw, tenant["key"])
        assert response.status_code == 400, raw[:80]
        assert response.json["errorCodes"] == ["notifications.request_malformed"], raw[:80]
        assert "surrogate" in response.json["errors"]["$"][0]
    assert Notification.select().count() == 0
    # A pair is a character: an emoji written as two escapes is accepted, and kept whole.
    paired = {**body, "tags": [{"key": "name", "value": "\U0001f600"}]}
    response = post(client, json.dumps(paired).encode(), tenant["key"])
    assert response.status_code == 202, response.json
    assert Notification.get().payload["subject"] == "Hi \U0001f600"


def test_tenant_id_in_any_uuid_spelling_names_the_same_workspace(client, tenant):
    tenant_id = tenant["body"]["tenantId"]
    for spelling in (tenant_id.upper(), tenant_id.replace("-", ""), "{" + tenant_id + "}"):
        response = post(client, {**tenant["body"], "tenantId": spelling}, tenant["key"])
        assert response.status_code == 202, (spelling, response.json)


def test_every_broken_rule_is_reported_together(client, tenant):
    body = {"tags": [{"key": "", "value": "x"}, {"key": "k" * 300, "value": "v" * 9000}],
            "versionNumber": 0,
            "emailOptions": {"to": ["", "not-an-address"], "cc": ["bad"], "bcc": [" "],
                             "replyTo": "nope", "fromAddress": "x@",
                             "overrideRecipients": ["", "y"],
                             "customHeaders": {"Subject": "x", "X-SVC-Id": "1",
                                               "Bad Name": "v", "X-Ok": "a\r\nb"}}}
    response = post(client, body, tenant["key"])
    assert response.status_code == 400
    problem = response.json
    assert problem["errorCode"] == "notifications.validation_failed"
    expected = {
        "notifications.tenant_id_required", "notifications.template_id_required",
        "notifications.tag_key_required", "notifications.tag_key_too_long",
        "notifications.tag_value_too_long", "notifications.version_number_invalid",
        "notifications.email.to_empty", "notifications.email.to_invalid",
        "notifications.email.cc_invalid", "notifications.email.bcc_empty",
        "notifications.email.reply_to_invalid", "notifications.email.from_address_invalid",
        "notifications.email.override_recipient_empty",
        "notifications.email.override_recipient_invalid",
        "notifications.email.custom_headers.name_not_permitted",
        "notifications.email.custom_headers.name_invalid",
        "notifications.email.custom_headers.value_invalid",
    }
    assert expected <= set(problem["errorCodes"])
    assert "tags[1].key" in problem["errors"] and "emailOptions.to[1]" in problem["errors"]
    assert problem["correlationId"] and problem["traceId"] and problem["instance"] == SEND


def test_tags_required_and_too_many(client, tenant):
    body = dict(tenant["body"])
    body.pop("tags")
    assert "notifications.tags_required" in post(client, body, tenant["key"]).json["errorCodes"]
    body["tags"] = [{"key": f"k{i}", "value": "v"} for i in range(101)]
    assert "notifications.too_many_tags" in post(client, body, tenant["key"]).json["errorCodes"]


def test_a_thousand_recipients_are_within_the_limit_whatever_the_defaults(client, tenant):
    # The template's default To (team@example.com) comes on top of the request's 1,000.
    many = [f"u{i}@example.com" for i in range(1000)]
    response = post(client, {**tenant["body"], "emailOptions": {"to": many}}, tenant["key"])
    assert response.status_code == 202, response.json
    payload = Notification.get().payload
    assert len(payload["to"]) == 1001 and payload["to"][0] == "team@example.com"


@pytest.mark.parametrize("option", ["requestDeliveryReceipt", "requestReadReceipt"])
def test_receipt_flags_are_booleans_not_null(client, tenant, option):
    # Spec 2.5 types these "boolean" (default false), unlike trackOpens' "boolean or null".
    body = {**tenant["body"], "emailOptions": {option: None}}
    response = post(client, body, tenant["key"])
    assert response.status_code == 400
    assert response.json["errors"] == {f"emailOptions.{option}": ["must be true or false"]}
    assert response.json["errorCodes"] == ["notifications.validation_type"]
    body = {**tenant["body"], "emailOptions": {"trackOpens": None, option: True}}
    assert post(client, body, tenant["key"]).status_code == 202


def test_recipient_and_header_limits(client, tenant):
    many = [f"u{i}@example.com" for i in range(1001)]
    body = {**tenant["body"], "emailOptions": {"to": many}}
    codes = post(client, body, tenant["key"]).json["errorCodes"]
    assert "notifications.email.too_many_recipients" in codes
    headers = {f"X-H{i}": "v" for i in range(11)}
    body = {**tenant["body"], "emailOptions": {"customHeaders": headers}}
    assert "notifications.email.custom_headers.too_many" in post(
        client, body, tenant["key"]).json["errorCodes"]
    body = {**tenant["body"], "emailOptions": {"customHeaders": {"X-A": "v" * 5000}}}
    assert "notifications.email.custom_headers.too_large" in post(
        client, body, tenant["key"]).json["errorCodes"]
    body = {**tenant["body"], "emailOptions": {"customHeaders": {"X-A": "1", "x-a": "2"}}}
    assert "notifications.email.custom_headers.name_duplicated" in post(
        client, body, tenant["key"]).json["errorCodes"]


def errors(client, tenant, options) -> list[str]:
    response = post(client, {**tenant["body"], "emailOptions": options}, tenant["key"])
    assert response.status_code == 400, (options, response.json)
    return response.json["errorCodes"]


def test_body_over_10_mb_is_a_bare_413(client, tenant):
    response = post(client, b"x" * (10 * 1024 * 1024 + 1), tenant["key"])
    assert response.status_code == 413
    assert response.data == b""
    assert response.headers["X-Correlation-Id"]


def test_version_resolution_errors(client, tenant):
    from engine.database.models import TemplateVersion

    key = tenant["key"]
    assert post(client, {**tenant["body"], "versionNumber": 7}, key).json[
        "errorCode"] == "notifications.template_version_not_found"
    TemplateVersion.create(template=tenant["template"], number=2, status="draft",
                           content=TemplateVersion.get().content)
    assert post(client, {**tenant["body"], "versionNumber": 2}, key).json[
        "errorCode"] == "notifications.template_version_is_draft"
    assert post(client, {**tenant["body"], "versionNumber": 1}, key).status_code == 202
    draft_only = factories.template(tenant["ws"], publish_it=False)
    response = post(client, {**tenant["body"], "templateId": str(draft_only.id)}, key)
    assert response.status_code == 400
    assert response.json["errorCode"] == "notifications.no_live_version"


def test_a_body_with_an_unclosed_html_tag_is_accepted_not_a_500(client, settings):
    ws = factories.workspace()
    content = {"body": "<p>Hi</p><html x", "htmlHead": "<title>T</title>"}
    tpl = factories.template(ws, content=content, defaults={"to": ["a@example.com"]})
    body = {"tenantId": str(ws.id), "templateId": str(tpl.id), "tags": []}
    assert post(client, body, factories.api_key(ws)).status_code == 202
    assert Notification.get().payload["html"].endswith("<body><p>Hi</p><html x</body></html>")


def test_sender_must_be_verified_unless_the_workspace_has_its_own_provider(client, tenant):
    body = {**tenant["body"], "emailOptions": {"fromAddress": "boss@unverified.example"}}
    response = post(client, body, tenant["key"])
    assert response.status_code == 422 and response.json["errorCode"] == "sender.not_verified"
    ws = factories.workspace(email_provider='{"plugin": "smtp", "url": "smtp://mx:25"}')
    tpl = factories.template(ws, defaults={"to": ["a@example.com"]})
    own = {"tenantId": str(ws.id), "templateId": str(tpl.id), "tags": [],
           "emailOptions": {"fromAddress": "boss@unverified.example"}}
    assert post(client, own, factories.api_key(ws)).status_code == 202


def test_webhook_channel_rules(client, settings):
    acct = factories.account(webhook_delivery=False)
    ws = factories.workspace(acct)
    tpl = factories.template(ws, channel="webhook")
    key = factories.api_key(ws)
    body = {"tenantId": str(ws.id), "templateId": str(tpl.id), "tags": []}
    assert post(client, body, key).json["errorCode"] == "notifications.webhook_destination_required"
    body["webhookOptions"] = {"urlOverride": "https://hooks.example.com/x"}
    response = post(client, body, key)
    assert response.status_code == 403
    assert response.json["errorCode"] == "notifications.webhook_delivery_not_available"
    acct.webhook_delivery = True
    acct.save()
    for url in ("http://hooks.example.com/x", "https://10.0.0.1/x", "https://user:pw@h.example/",
                "https://hooks.example.com:8443/x"):
        body["webhookOptions"] = {"urlOverride": url}
        response = post(client, body, key)
        assert response.status_code == 400, url
        assert response.json["errorCode"] == "notifications.webhook_destination_invalid"
    body["webhookOptions"] = {"urlOverride": "https://127.0.0.1:9/x",
                              "headers": {"Authorization": "x", "X-Api-Token": "y"}}
    codes = post(client, body, key).json["errorCodes"]
    assert "notifications.webhook.custom_headers.name_not_permitted" in codes


def test_trace_id_comes_from_a_valid_traceparent(client, tenant):
    trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    response = post(client, {}, tenant["key"], traceparent=f"00-{trace}-00f067aa0ba902b7-01")
    assert response.json["traceId"] == trace
    response = post(client, {}, tenant["key"], traceparent=f"01-{trace}-00f067aa0ba902b7-01-x")
    assert response.json["traceId"] == trace  # a later version's extra field
    for invalid in ("garbage", f"ff-{trace}-00f067aa0ba902b7-01",
                    f"00-{trace.upper()}-00f067aa0ba902b7-01", f"00-{trace}-00f067aa0ba902b7-01-x",
                    f"00-{'0' * 32}-00f067aa0ba902b7-01", f"00-{trace}-{'0' * 16}-01"):
        response = post(client, {}, tenant["key"], traceparent=invalid)
        assert len(response.json["traceId"]) == 32 and response.json["traceId"] != trace, invalid


def test_chunked_body_over_10_mb_is_a_bare_413_read_in_bounded_pieces(client, tenant):
    import io

    class Counting(io.BytesIO):
        """Records how far the app read: it must stop just past the limit."""

        def read(self, size=-1):
            assert size != -1, "the body must be read in pieces, not whole"
            return super().read(size)

    stream = Counting(b"x" * (12 * 1024 * 1024))
    response = client.post(SEND, input_stream=stream, content_type="application/json",
                           headers={"X-Api-Key": tenant["key"], "Transfer-Encoding": "chunked"})
    assert response.status_code == 413
    assert response.data == b""
    assert stream.tell() <= 10 * 1024 * 1024 + 64 * 1024


def test_chunked_body_under_the_limit_is_read_and_accepted(client, tenant):
    import io

    stream = io.BytesIO(json.dumps(tenant["body"]).encode())
    response = client.post(SEND, input_stream=stream, content_type="application/json",
                           headers={"X-Api-Key": tenant["key"], "Transfer-Encoding": "chunked"})
    assert response.status_code == 202, response.json


def test_other_http_errors_are_problem_details_and_keep_their_headers(client):
    response = client.put(SEND)
    assert response.status_code == 405
    assert response.mimetype == "application/problem+json"
    assert "POST" in response.headers["Allow"]
    assert response.json["correlationId"] == response.headers["X-Correlation-Id"]


def test_errors_come_in_the_order_of_d1(client, settings):
    acct = factories.account(monthly_limit=None, webhook_delivery=False)
    ws = factories.workspace(acct)
    other = factories.workspace()
    tpl = factories.template(ws, defaults={"to": ["a@example.com"]})
    key = factories.api_key(ws)
    foreign = factories.template(other)
    base = {"tenantId": str(ws.id), "templateId": str(tpl.id), "tags": []}

    def code(body, api_key=key):
        return post(client, body, api_key).json["errorCode"]

    bad_field = {**base, "tenantId": str(other.id), "tags": None}
    assert code(bad_field, "hk_unknown") == "api_keys.invalid"  # 401 before anything else
    assert code(None) == "notifications.request_missing"
    assert code(bad_field) == "notifications.validation_failed"  # before tenant_mismatch
    assert code({**base, "tenantId": str(other.id), "templateId": str(foreign.id)}) == \
        "api_keys.tenant_mismatch"
    assert code({**base, "templateId": str(foreign.id)}) == "notifications.template_not_found"
    unverified = {"fromAddress": "x@unverified.example"}
    assert code({**base, "versionNumber": 9, "emailOptions": unverified}) == \
        "notifications.template_version_not_found"  # version before sender
    assert code({**base, "emailOptions": unverified}) == "sender.not_verified"
    assert code(base) == "notifications.monthly_limit_not_configured"  # sender before allowance
    hook = factories.template(ws, channel="webhook")
    assert code({**base, "templateId": str(hook.id)}) == \
        "notifications.webhook_destination_required"  # before the plan check
    assert code({**base, "templateId": str(hook.id),
                 "webhookOptions": {"urlOverride": "ftp://x"}}) == \
        "notifications.webhook_delivery_not_available"  # before the destination check
    assert Notification.select().count() == 0


def test_validation_stops_at_the_spec_limits_and_caps_the_errors_map(client, tenant):
    """12,000 bad recipients are checked only up to the 1,000 the spec allows, and the
    answer names 100 of them and how many more; 2,000 header names only the first 10."""
    options = {"to": ["not-an-address"] * 12_000,
               "customHeaders": {f"Bad Name {i}": "v" for i in range(2_000)}}
    body = {**tenant["body"], "tags": [{"key": "", "value": "v"}] * 1_000,
            "emailOptions": options}
    response = post(client, body, tenant["key"])
    assert response.status_code == 400
    problem = response.json
    errors = problem["errors"]
    assert len(errors) == 101 and len(response.data) < 32 * 1024
    # One entry each for tags, emailOptions and customHeaders being too many, then one per
    # element checked: the first 100 tags, 1,000 recipients and 10 headers, no more.
    counted = 3 + 100 + 1000 + 10
    assert errors["..."] == [f"and {counted - 100} more"]
    assert {"notifications.too_many_tags", "notifications.email.too_many_recipients",
            "notifications.email.custom_headers.too_many",
            "notifications.email.custom_headers.name_invalid"} <= set(problem["errorCodes"])
    assert Notification.select().count() == 0


def test_a_body_shorter_than_its_content_length_is_a_400_and_nothing_is_sent(client, tenant):
    """The body is read to its Content-Length off the server's stream: one that ends first
    (the client went away) is refused as werkzeug refuses it, never parsed as it stands."""
    from engine.database.models import Notification

    whole = json.dumps(tenant["body"]).encode() + b"   "
    response = client.post(SEND, data=whole[:-3], content_type="application/json",
                           headers={"X-Api-Key": tenant["key"]},
                           environ_overrides={"CONTENT_LENGTH": str(len(whole))})
    assert response.status_code == 400
    assert response.mimetype == "application/problem+json"
    assert Notification.select().count() == 0


@pytest.mark.parametrize("length", ["²", "1e3", "-5", " 12"])
def test_a_content_length_that_is_not_a_number_is_no_500(client, tenant, length):
    response = client.post(SEND, data=json.dumps(tenant["body"]).encode(),
                           content_type="application/json", headers={"X-Api-Key": tenant["key"]},
                           environ_overrides={"CONTENT_LENGTH": length})
    assert response.status_code < 500, response.data
