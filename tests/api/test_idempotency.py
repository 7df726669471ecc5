"""Idempotency-Key on send: Stripe's semantics, through the real Redis and database."""

from __future__ import annotations

import datetime as dt
import json
import threading

import pytest
from redis import Redis

from cli.app import create_app
from engine.catalog import keycache, snapshots
from engine.database.models import Account, Notification
from engine.queue.queueing import queue
from engine.sending import idempotency
from tests import factories

SEND = "/api/v1/notifications/send"


def _post(client, body, api_key, idem=None, **headers):
    if idem is not None:
        headers["Idempotency-Key"] = idem
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    return client.post(SEND, data=data, content_type="application/json",
                       headers={"X-Api-Key": api_key, **headers})


def test_a_retry_returns_the_first_answer_and_creates_nothing(client, tenant):
    first = _post(client, tenant["body"], tenant["key"], "order-1", **{
        "X-Correlation-Id": "first-request"})
    again = _post(client, tenant["body"], tenant["key"], "order-1")
    assert (first.status_code, again.status_code) == (202, 202)
    assert again.json == first.json and again.json["correlationId"] == "first-request"
    assert again.headers["X-Correlation-Id"] == "first-request"
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert Notification.select().count() == 1
    assert len(queue().get_job_ids()) == 1
    (row,) = Notification.select()
    assert row.idempotency_key == "order-1"


def test_the_body_is_compared_as_canonical_json(client, tenant):
    body = {**tenant["body"], "versionNumber": 1}
    assert _post(client, body, tenant["key"], "k").status_code == 202
    # Members reordered, other spacing, escapes, and 1.0 for 1: the same JSON value.
    same = json.dumps(dict(reversed(list({**body, "versionNumber": 1.0}.items()))), indent=3)
    same = same.replace('"Ada"', '"\\u0041da"')
    again = _post(client, same, tenant["key"], "k")
    assert again.status_code == 202 and again.headers["Idempotent-Replayed"] == "true"
    assert Notification.select().count() == 1


def test_the_same_key_with_another_body_is_422(client, tenant):
    assert _post(client, tenant["body"], tenant["key"], "k").status_code == 202
    other = {**tenant["body"], "tags": [{"key": "name", "value": "Grace"}]}
    response = _post(client, other, tenant["key"], "k")
    assert response.status_code == 422
    assert response.json["errorCode"] == "notifications.idempotency_key_reused"
    assert Notification.select().count() == 1


def test_keys_are_scoped_to_the_workspace(client, tenant):
    other_ws = factories.workspace()
    other_tpl = factories.template(other_ws, defaults={"to": ["a@example.com"]})
    other_key = factories.api_key(other_ws)
    other_body = {"tenantId": str(other_ws.id), "templateId": str(other_tpl.id), "tags": []}
    assert _post(client, tenant["body"], tenant["key"], "shared").status_code == 202
    response = _post(client, other_body, other_key, "shared")
    assert response.status_code == 202 and "Idempotent-Replayed" not in response.headers
    assert Notification.select().count() == 2


@pytest.mark.parametrize("value", ["", "x" * 256, "caf\u00e9", "tab\there", "nul\x7f"])
def test_a_malformed_key_is_400_with_our_code_and_stores_nothing(client, tenant, value):
    response = _post(client, tenant["body"], tenant["key"], value)
    assert response.status_code == 400
    assert response.json["errorCode"] == "notifications.idempotency_key_invalid"
    assert response.headers["Content-Type"] == "application/problem+json"
    assert Notification.select().count() == 0


def test_a_key_of_255_printable_characters_with_spaces_is_taken(client, tenant):
    value = ("a b~!" * 51)[:255]
    assert _post(client, tenant["body"], tenant["key"], value).status_code == 202
    assert _post(client, tenant["body"], tenant["key"], value).headers[
        "Idempotent-Replayed"] == "true"


def test_a_bad_key_header_is_answered_after_authentication(client, tenant):
    response = _post(client, tenant["body"], "hk_unknown", "")
    assert response.status_code == 401


def test_a_request_refused_before_acceptance_stores_nothing(client, tenant):
    broken = {**tenant["body"], "tags": [{"key": ""}]}
    assert _post(client, broken, tenant["key"], "fix-me").status_code == 400
    Account.update(monthly_limit=0).execute()
    snapshots.clear()
    assert _post(client, tenant["body"], tenant["key"], "fix-me").status_code == 429
    Account.update(monthly_limit=10).execute()
    snapshots.clear()
    corrected = _post(client, tenant["body"], tenant["key"], "fix-me")
    assert corrected.status_code == 202 and "Idempotent-Replayed" not in corrected.headers
    assert Notification.select().count() == 1


def test_a_request_refused_at_render_gives_the_key_back(client, settings):
    ws = factories.workspace(factories.account(webhook_delivery=True, monthly_limit=1))
    key = factories.api_key(ws)
    hook = factories.template(ws, channel="webhook", content={"body": '{"a": {{{x}}} }'})
    body = {"tenantId": str(ws.id), "templateId": str(hook.id),
            "tags": [{"key": "x", "value": "[1,"}],
            "webhookOptions": {"urlOverride": "https://127.0.0.1/x"}}
    for _ in range(2):  # refused after admission: the unit and the key are given back
        response = _post(client, body, key, "render")
        assert response.json["errorCodes"] == ["notifications.rendering_failed"]
    body["tags"] = [{"key": "x", "value": "[1]"}]
    assert _post(client, body, key, "render").status_code == 202
    assert Notification.select().count() == 1


def test_the_allowance_counts_the_first_request_only(client, tenant, settings):
    Account.update(monthly_limit=1).execute()
    for _ in range(4):
        assert _post(client, tenant["body"], tenant["key"], "once").status_code == 202
    assert Notification.select().count() == 1
    redis = Redis.from_url(settings.redis_url)
    (counter,) = redis.keys("herald:allowance:*")
    assert redis.get(counter) == b"1"
    assert _post(client, tenant["body"], tenant["key"], "another").status_code == 429


def test_rate_limits_count_the_first_request_only(settings, tenant, windows_held):
    keycache.clear()
    client = create_app(settings.with_changes(rate_limit_send_per_key=2)).test_client()
    for _ in range(5):
        assert _post(client, tenant["body"], tenant["key"], "same").status_code == 202
    assert _post(client, tenant["body"], tenant["key"], "second").status_code == 202
    assert _post(client, tenant["body"], tenant["key"], "third").status_code == 429


def test_a_request_racing_the_first_waits_for_its_answer(client, tenant, settings):
    idem = idempotency.read_header("race", tenant["body"], None)
    record = idem.record(str(tenant["ws"].id))
    redis = Redis.from_url(settings.redis_url)
    redis.set(record, idem.pending("the-first"), ex=60)  # the first request, still running
    finish = threading.Timer(0.3, lambda: redis.set(record, idem.done("the-first")))
    finish.start()
    response = _post(client, tenant["body"], tenant["key"], "race")
    finish.join()
    assert response.status_code == 202 and response.json["correlationId"] == "the-first"
    assert Notification.select().count() == 0  # the first request's row is its own business


def test_a_request_racing_a_first_that_does_not_finish_is_409(client, tenant, settings,
                                                              monkeypatch):
    monkeypatch.setattr(idempotency, "WAIT_SECONDS", 0.2)
    idem = idempotency.read_header("stuck", tenant["body"], None)
    Redis.from_url(settings.redis_url).set(idem.record(str(tenant["ws"].id)),
                                           idem.pending("the-first"), ex=60)
    response = _post(client, tenant["body"], tenant["key"], "stuck")
    assert response.status_code == 409
    assert response.json["errorCode"] == "notifications.idempotency_key_in_use"
    assert response.headers["Retry-After"] == "1"
    other = {**tenant["body"], "tags": []}  # another body is still 422, even in flight
    assert _post(client, other, tenant["key"], "stuck").status_code == 422
    assert Notification.select().count() == 0


def test_concurrent_requests_with_one_key_create_one_notification(settings, tenant):
    app = create_app(settings)
    answers: list[tuple[int, str | None]] = []
    lock = threading.Lock()
    start = threading.Barrier(8)

    def send():
        client = app.test_client()
        start.wait()
        response = _post(client, tenant["body"], tenant["key"], "together")
        with lock:
            answers.append((response.status_code, response.json.get("correlationId")))

    threads = [threading.Thread(target=send) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert Notification.select().count() == 1
    (row,) = Notification.select()
    assert {status for status, _ in answers} <= {202, 409}
    accepted = [corr for status, corr in answers if status == 202]
    assert accepted and set(accepted) == {row.correlation_id}


def test_a_redis_that_lost_the_record_still_accepts_a_key_once(client, tenant, settings):
    first = _post(client, tenant["body"], tenant["key"], "durable")
    Redis.from_url(settings.redis_url).flushall()
    again = _post(client, tenant["body"], tenant["key"], "durable")
    assert again.status_code == 202 and again.json == first.json
    assert again.headers["Idempotent-Replayed"] == "true"
    Redis.from_url(settings.redis_url).flushall()
    other = {**tenant["body"], "tags": []}
    assert _post(client, other, tenant["key"], "durable").status_code == 422
    assert Notification.select().count() == 1
    # The unit taken by each of those requests was given back.
    Account.update(monthly_limit=2).execute()
    snapshots.clear()
    assert _post(client, tenant["body"], tenant["key"], "next").status_code == 202
    assert _post(client, tenant["body"], tenant["key"], "after").status_code == 429


def test_a_key_is_kept_24_hours(client, tenant, settings):
    first = _post(client, tenant["body"], tenant["key"], "daily")
    old = Notification.get()
    Notification.update(created_at=old.created_at - dt.timedelta(hours=24, seconds=1)).execute()
    Redis.from_url(settings.redis_url).flushall()  # the record's own 24 hours are over too
    again = _post(client, tenant["body"], tenant["key"], "daily")
    assert again.status_code == 202 and again.json["correlationId"] != first.json[
        "correlationId"]
    assert Notification.select().count() == 2
    assert Notification.get_by_id(old.id).idempotency_key is None
    ttl = Redis.from_url(settings.redis_url).ttl(
        idempotency.read_header("daily", tenant["body"], None).record(str(tenant["ws"].id)))
    assert 24 * 3600 - 60 < ttl <= 24 * 3600


@pytest.mark.timeout(30)
def test_a_request_racing_a_first_that_is_refused_is_told_to_retry(client, tenant, settings,
                                                                   monkeypatch):
    monkeypatch.setattr(idempotency, "WAIT_SECONDS", 600.0)  # only the refusal ends the wait
    idem = idempotency.read_header("refused", tenant["body"], None)
    record = idem.record(str(tenant["ws"].id))
    redis = Redis.from_url(settings.redis_url)
    redis.set(record, idem.pending("the-first"), ex=60)
    refused = threading.Timer(0.3, lambda: redis.delete(record))  # released: not accepted
    refused.start()
    response = _post(client, tenant["body"], tenant["key"], "refused")
    refused.join()
    assert response.status_code == 409 and response.headers["Retry-After"] == "1"
    retry = _post(client, tenant["body"], tenant["key"], "refused")
    assert retry.status_code == 202 and "Idempotent-Replayed" not in retry.headers
    assert Notification.select().count() == 1
