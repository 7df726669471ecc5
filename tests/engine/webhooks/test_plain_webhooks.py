"""Webhooks over http:// to loopback (private destinations allowed: development and test):
signed and bounded like HTTPS attempts; refused in production, at send and at attempt."""

from __future__ import annotations

import contextlib
import json
import socket
import threading

import pytest

from cli.app import create_app
from engine.webhooks.delivery import deliver_webhook
from engine.webhooks.signatures import verify_webhook
from tests import factories
from tests.support.vendor_server import VendorServer

SECRET = "whsec_test"


def _deliver(url: str, **options):
    return deliver_webhook(url, b'{"order": "A-1"}', content_type="application/json",
                           custom_headers={"X-Team": "core"}, secret=SECRET,
                           delivery_id="0b6f1c2e-8d4a-4f3b-9a1e-5c7d2e8f9a10", **options)


def test_a_plain_http_receiver_on_loopback_gets_a_signed_request():
    receiver = VendorServer(lambda path, headers, body: (200, {}, {"ok": True}))
    try:
        result = _deliver(f"http://127.0.0.1:{receiver.port}/hook?x=1", allow_private=True)
        assert (result.outcome, result.status_code) == ("delivered", 200)
        ((path, headers, body),) = receiver.requests
        assert path == "/hook?x=1" and body == b'{"order": "A-1"}'
        assert headers["Host"] == f"127.0.0.1:{receiver.port}"
        assert headers["X-Team"] == "core"
        assert verify_webhook(SECRET, body, headers)
        assert json.loads(result.response_excerpt) == {"ok": True}
    finally:
        receiver.close()


def test_a_plain_http_answer_is_classified_as_an_https_one():
    receiver = VendorServer(lambda path, headers, body: (503, {"Retry-After": "7"}, {}))
    try:
        result = _deliver(f"http://localhost:{receiver.port}/hook", allow_private=True)
        assert (result.outcome, result.status_code, result.retry_after) == (
            "transient", 503, 7.0)
    finally:
        receiver.close()


@contextlib.contextmanager
def _dribbler(chunk: bytes, interval: float = 0.05):
    """A plain HTTP receiver that sends ``chunk`` again and again until the client leaves."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve():
        with contextlib.suppress(OSError):
            conn, _ = listener.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\n")
                while not stop.wait(interval):
                    conn.sendall(chunk)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        with contextlib.suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(timeout=10)


def test_a_receiver_that_dribbles_is_cut_off_at_the_attempt_deadline():
    with _dribbler(b"X") as port:
        result = _deliver(f"http://127.0.0.1:{port}/hook", allow_private=True, timeout=1.0)
    assert result.outcome == "transient" and result.error == "timed out"


def test_an_answer_past_the_cap_is_refused():
    with _dribbler(b"X-Filler: " + b"a" * 4000 + b"\r\n", interval=0.001) as port:
        result = _deliver(f"http://127.0.0.1:{port}/hook", allow_private=True, timeout=5.0)
    assert result.outcome == "transient"
    assert result.error.startswith("answer too large"), result.error


def test_an_attempt_in_production_refuses_plain_http_without_a_connection():
    receiver = VendorServer(lambda path, headers, body: (200, {}, {}))
    try:
        result = _deliver(f"http://127.0.0.1:{receiver.port}/hook")
        assert result.outcome == "permanent" and receiver.requests == []
        assert "rule: https:// only" in result.error
        assert "HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS" not in result.error
    finally:
        receiver.close()


def _webhook_send(settings, url: str):
    client = create_app(settings).test_client()
    ws = factories.workspace(factories.account(webhook_delivery=True))
    hook = factories.template(ws, channel="webhook")
    body = {"tenantId": str(ws.id), "templateId": str(hook.id),
            "tags": [{"key": "id", "value": "1"}], "webhookOptions": {"urlOverride": url}}
    return client.post("/api/v1/notifications/send", json=body,
                       headers={"X-Api-Key": factories.api_key(ws)})


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/dev/inbox/webhooks/demo",
                                 "https://localhost:8443/hook"])
def test_a_send_outside_production_names_the_rule_and_the_setting(settings, url):
    response = _webhook_send(settings.with_changes(webhook_allow_private=False), url)
    assert response.status_code == 400
    assert response.json["errorCode"] == "notifications.webhook_destination_invalid"
    assert "rule:" in response.json["detail"]
    assert "HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS=true" in response.json["detail"]


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/hook", "https://127.0.0.1/hook",
                                 "https://localhost:8443/hook", "http://localhost/hook"])
def test_a_send_in_production_is_refused_as_before_and_names_no_setting(settings, url):
    production = settings.with_changes(env="production", webhook_allow_private=False,
                                       email_provider="", sms_provider="")
    response = _webhook_send(production, url)
    assert response.status_code == 400
    assert response.json["errorCode"] == "notifications.webhook_destination_invalid"
    assert "rule:" in response.json["detail"]
    assert "HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS" not in response.json["detail"]


def test_a_send_with_private_destinations_allowed_takes_http_to_loopback(settings):
    response = _webhook_send(settings, "http://127.0.0.1:8000/dev/inbox/webhooks/demo")
    assert response.status_code == 202, response.json
