"""The send and the preview answered before Flask's request cycle (api/direct_routes.py):
taken for a plain POST, and answering exactly what Flask's own route answers, successes,
replays and errors alike. Flask's route is reached the way a chunked request reaches it."""

from __future__ import annotations

import io
import json
import logging
import uuid

import pytest
from flask import request_started

from api import notifications
from tests.api.test_send import SEND

PREVIEW = "/api/v1/notifications/preview"
# Given on both paths, so that the ids a problem shows are the same.
FIXED = {"X-Correlation-Id": "parity-check",
         "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}


@pytest.fixture
def flask_requests(app):
    """The requests Flask's request cycle started (its ``request_started`` signal)."""
    seen: list[str] = []

    def started(sender, **_):
        from flask import request
        seen.append(request.path)

    request_started.connect(started, app)
    yield seen
    request_started.disconnect(started, app)


def direct(client, path, body, **headers):
    """A plain POST, its Content-Length given: the direct route's."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client.post(path, data=data, content_type="application/json", headers=headers)


def through_flask(client, path, body, **headers):
    """The same request with a chunked body, which only Flask's route reads."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client.post(path, input_stream=io.BytesIO(data), content_type="application/json",
                       headers={**headers, "Transfer-Encoding": "chunked"})


def _headers(response, *varying: str) -> list[tuple[str, str]]:
    return [(name, "(varies)" if name in varying else value)
            for name, value in response.headers.items()]


def test_a_plain_send_and_preview_never_start_flasks_request_cycle(client, tenant,
                                                                     flask_requests):
    key = tenant["key"]
    assert direct(client, SEND, tenant["body"], **{"X-Api-Key": key}).status_code == 202
    assert direct(client, PREVIEW, tenant["body"], **{"X-Api-Key": key}).status_code == 200
    assert flask_requests == []
    assert through_flask(client, SEND, tenant["body"], **{"X-Api-Key": key}).status_code == 202
    assert client.put(SEND).status_code == 405  # another method: Flask's
    assert client.post(SEND + "/").status_code == 404  # another path: Flask's
    assert flask_requests == [SEND, SEND, SEND + "/"]


def test_a_preview_answers_the_same_bytes_and_headers_on_both_paths(client, tenant):
    headers = {"X-Api-Key": tenant["key"], **FIXED}
    mine, flasks = (ask(client, PREVIEW, tenant["body"], **headers)
                    for ask in (direct, through_flask))
    assert mine.status == flasks.status == "200 OK"
    assert mine.data == flasks.data
    assert _headers(mine) == _headers(flasks)
    assert mine.headers["X-Correlation-Id"] == "parity-check"
    assert mine.headers["X-Content-Type-Options"] == "nosniff"


def test_a_send_and_its_replays_answer_the_same_on_both_paths(client, tenant):
    headers = {"X-Api-Key": tenant["key"], "Idempotency-Key": "order-1"}
    first = direct(client, SEND, tenant["body"], **headers)
    other = through_flask(client, SEND, tenant["body"],
                          **{**headers, "Idempotency-Key": "order-2"})
    assert first.status == other.status == "202 ACCEPTED"
    assert _headers(first, "X-Correlation-Id", "Content-Length") \
        == _headers(other, "X-Correlation-Id", "Content-Length")
    replays = [ask(client, SEND, tenant["body"], **headers) for ask in (direct, through_flask)]
    for replay in replays:
        assert replay.status == "202 ACCEPTED" and replay.data == first.data
        # The first answer's correlation id, in the header as in the body.
        assert replay.headers["X-Correlation-Id"] == first.json["correlationId"]
    assert _headers(replays[0]) == _headers(replays[1])
    assert replays[0].headers["Idempotent-Replayed"] == "true"


@pytest.mark.parametrize("case", ["no key", "wrong key", "not JSON", "bad field",
                                  "unknown template"])
def test_a_problem_is_the_same_on_both_paths(client, tenant, case):
    body, key = tenant["body"], tenant["key"]
    if case == "no key":
        key = None
    elif case == "wrong key":
        key = "hk_wrong"
    elif case == "not JSON":
        body = b"{not json"
    elif case == "bad field":
        body = {**body, "emailOptions": {"to": ["not an address"]}}
    else:
        body = {**body, "templateId": str(uuid.uuid4())}
    headers = {**FIXED, **({"X-Api-Key": key} if key else {})}
    for path in (SEND, PREVIEW):
        mine, flasks = (ask(client, path, body, **headers) for ask in (direct, through_flask))
        assert mine.status_code >= 400 and mine.status == flasks.status, path
        assert mine.mimetype == "application/problem+json"
        assert mine.json == flasks.json, path
        assert mine.json["correlationId"] == "parity-check"
        assert _headers(mine) == _headers(flasks), path


def test_an_unexpected_error_is_a_logged_500_on_both_paths(client, tenant, monkeypatch,
                                                            caplog):
    def broken(*_args, **_kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(notifications.sending, "send", broken)
    headers = {"X-Api-Key": tenant["key"], **FIXED}
    with caplog.at_level(logging.ERROR, logger="herald.api"):
        mine, flasks = (ask(client, SEND, tenant["body"], **headers)
                        for ask in (direct, through_flask))
    assert mine.status_code == 500 and mine.json == flasks.json
    assert mine.json["correlationId"] == "parity-check"
    assert _headers(mine) == _headers(flasks)
    logged = [r for r in caplog.records if "unhandled error" in r.getMessage()]
    assert len(logged) == 2 and all(r.exc_info for r in logged)


def test_a_body_cut_short_is_a_400_problem(app, tenant):
    """The client promised more bytes than it sent (the server's stream ends early)."""
    data = json.dumps(tenant["body"]).encode()
    statuses: list[str] = []
    environ = {"REQUEST_METHOD": "POST", "PATH_INFO": SEND, "SERVER_NAME": "localhost",
               "SERVER_PORT": "80", "wsgi.url_scheme": "http", "REMOTE_ADDR": "127.0.0.1",
               "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(data) + 10),
               "HTTP_X_API_KEY": tenant["key"], "SERVER_PROTOCOL": "HTTP/1.1",
               "wsgi.input": io.BytesIO(data), "wsgi.errors": io.StringIO()}
    answer = b"".join(app(environ, lambda status, _headers, *_: statuses.append(status)))
    assert statuses == ["400 BAD REQUEST"]
    assert json.loads(answer)["status"] == 400
