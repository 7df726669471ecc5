"""A send whose connection dropped before its answer, retried with its Idempotency-Key, is
delivered once: a real HTTP server, a real RQ worker and a real SMTP server."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time

from werkzeug.serving import make_server

from cli.app import create_app
from engine import runtime
from engine.database.models import Notification
from engine.delivery import providers
from engine.queue.embedded_redis import free_port
from engine.queue.queueing import QUEUE_NAME
from tests import factories
from tests.support.rq_workers import PromptSimpleWorker
from tests.support.smtp_server import start_smtp

SEND = "/api/v1/notifications/send"


def _request(body: bytes, headers: dict[str, str]) -> bytes:
    lines = [f"POST {SEND} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json",
             f"Content-Length: {len(body)}", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
    return "\r\n".join(lines).encode() + body


def test_a_send_retried_after_a_dropped_connection_is_delivered_once(settings):
    smtp, handler = start_smtp(free_port())
    app = create_app(settings.with_changes(email_provider=f"smtp://127.0.0.1:{smtp.port}"))
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        ws = factories.workspace()
        template = factories.template(ws, defaults={"to": ["ada@example.net"]})
        key = factories.api_key(ws)
        body = json.dumps({"tenantId": str(ws.id), "templateId": str(template.id),
                           "tags": [{"key": "name", "value": "Ada"}]}).encode()
        headers = {"X-Api-Key": key, "Idempotency-Key": "welcome-ada"}
        # The first try: the whole request goes out, the connection closes unread.
        with socket.create_connection(("127.0.0.1", server.server_port)) as sock:
            sock.sendall(_request(body, {**headers, "X-Correlation-Id": "the-dropped-one"}))
            sock.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + 15
        while not Notification.select().exists():
            assert time.monotonic() < deadline, "the dropped request was never accepted"
            time.sleep(0.05)
        # The client never saw an answer, so it sends again with the same key.
        retry = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=10)
        retry.request("POST", SEND, body=body, headers={
            **headers, "Content-Type": "application/json"})
        answer = retry.getresponse()
        assert answer.status == 202
        assert json.loads(answer.read())["correlationId"] == "the-dropped-one"
        assert answer.getheader("Idempotent-Replayed") == "true"
        retry.close()

        PromptSimpleWorker([QUEUE_NAME], connection=runtime.redis()).work(burst=True)
        (row,) = Notification.select()
        assert row.status == "delivered"
        assert len(handler.received) == 1
        assert handler.received[0].rcpt_tos == ["ada@example.net"]
    finally:
        server.shutdown()
        providers.close_all()
        smtp.stop()
