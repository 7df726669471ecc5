"""`herald serve` answers /healthz while every request thread of its worker is held:
/healthz is answered on the thread that accepts (cli/health_worker.py), never queued
behind a tenant's slow requests. Before, it waited in the pool's queue until one of them
let go of its thread."""

from __future__ import annotations

import http.client
import json
import socket

import pytest

from cli.serve import gunicorn_options
from tests.support.serve_process import herald_serve

pytestmark = pytest.mark.slow
THREADS = gunicorn_options("127.0.0.1", 0, 1)["threads"]
HANG = 30  # seconds: no answer by then is a hang, not a slow answer


@pytest.fixture
def server(settings, tmp_path):
    with herald_serve(settings, tmp_path) as (_, port):
        yield port


def _healthz(port: int) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=HANG)
    conn.request("GET", "/healthz")
    return conn.getresponse()


def test_healthz_is_answered_while_every_request_thread_is_held(server):
    port = server
    held = []
    # Each sends a head without its end: a pool thread takes it and waits for the rest.
    # Accepted in order, before the probe's connection: the pool's queue is first in,
    # first out, so the probe comes after all of them.
    for _ in range(THREADS * 2):
        sock = socket.create_connection(("127.0.0.1", port), timeout=HANG)
        sock.sendall(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        held.append(sock)

    response = _healthz(port)
    assert response.status == 200
    assert json.loads(response.read()) == {"status": "ok"}
    assert response.getheader("Connection") == "close"  # one answer, then the socket goes
    assert response.getheader("X-Correlation-Id")  # the app's answer, not a canned one

    for sock in held:  # the held requests go on and are answered
        sock.sendall(b"Connection: close\r\n\r\n")
    for sock in held:
        answer = http.client.HTTPResponse(sock)
        answer.begin()
        answer.read()
        assert answer.status in (200, 503)
        sock.close()


def test_a_healthz_with_a_body_or_kept_alive_is_still_answered(server):
    port = server
    sock = socket.create_connection(("127.0.0.1", port), timeout=HANG)
    # A body: the pool's (draining it could wait); then a second request on the socket.
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}"
                 b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    received = b""
    while chunk := sock.recv(65536):  # both answers, then the server closes
        received += chunk
    assert received.count(b"HTTP/1.1 200 OK\r\n") == 2
    assert received.count(b'{"status": "ok"}') == 2
    sock.close()
    assert _healthz(port).status == 200
