"""`herald serve` as run: what gunicorn refuses before the app sees it is problem details
too, and nothing is left outside the server's own process."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from engine.queue.embedded_redis import free_port
from tests import factories
from tests.conftest import TEST_SECRET_KEY


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


@pytest.fixture
def server(settings, home):
    port = free_port()
    home.mkdir()
    env = {**os.environ, "HERALD_ENV": "test", "HERALD_DATABASE_URL": settings.database_url,
           "HERALD_REDIS_URL": settings.redis_url, "HERALD_SECRET_KEY": TEST_SECRET_KEY,
           "HOME": str(home)}
    env.pop("XDG_RUNTIME_DIR", None)
    proc = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--host", "127.0.0.1",
                             "--port", str(port), "--workers", "1"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while _answer(port, b"GET /api/v1/api-keys/validate HTTP/1.1\r\nHost: x\r\n"
                            b"X-Api-Key: hk_nothing\r\n\r\n") is None:
            assert proc.poll() is None and time.monotonic() < deadline, "serve never answered"
            time.sleep(0.1)
        yield port
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def _answer(port: int, request: bytes) -> http.client.HTTPResponse | None:
    """The response to ``request`` sent as raw bytes, or None when nothing listens yet."""
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    except OSError:
        return None
    sock.sendall(request)
    response = http.client.HTTPResponse(sock)
    response.begin()
    response.body = response.read()  # type: ignore[attr-defined]
    sock.close()
    return response


def _problem(response: http.client.HTTPResponse, status: int) -> dict:
    assert response.status == status
    assert response.getheader("Content-Type") == "application/problem+json"
    problem = json.loads(response.body)  # type: ignore[attr-defined]
    assert problem["status"] == status and problem["errorCode"] is None
    assert problem["title"] == response.reason and problem["detail"]
    assert problem["correlationId"] == response.getheader("X-Correlation-Id")
    assert len(problem["traceId"]) == 32
    return problem


@pytest.mark.slow
def test_an_api_key_over_gunicorns_header_limit_is_a_431_problem(server):
    key = "hk_" + "a" * 9000
    response = _answer(server, b"GET /api/v1/api-keys/validate HTTP/1.1\r\nHost: x\r\n"
                               b"X-Api-Key: " + key.encode() + b"\r\n\r\n")
    problem = _problem(response, 431)
    assert len(problem["detail"]) <= 200


@pytest.mark.slow
def test_a_long_request_line_not_http_and_an_unknown_expectation_are_problems(server):
    _problem(_answer(server, b"GET /" + b"x" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"), 414)
    _problem(_answer(server, b"NOT HTTP AT ALL\r\n\r\n"), 400)
    _problem(_answer(server, b"GET /api/v1/api-keys/validate HTTP/1.1\r\nHost: x\r\n"
                             b"Expect: a-pony\r\n\r\n"), 417)


@pytest.mark.slow
def test_the_app_still_answers_after_gunicorn_refused_a_request(server):
    _answer(server, b"NOT HTTP AT ALL\r\n\r\n")
    response = _answer(server, b"GET /api/v1/api-keys/validate HTTP/1.1\r\nHost: x\r\n"
                               b"X-Api-Key: hk_nothing\r\n\r\n")
    assert response.status == 200 and json.loads(response.body)["isValid"] is False


def _raw_until_closed(port: int, request: bytes) -> bytes:
    """Everything the server sends for ``request`` until it closes the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except TimeoutError:
            raise AssertionError(f"the connection stayed open after {received!r}") from None
    return received


@pytest.mark.slow
def test_a_body_announced_over_the_limit_gets_413_without_100_continue(server):
    # The client waits for 100 Continue before it sends 20 MB: it gets the 413 instead,
    # and the connection closes, since the body announced never came.
    answer = _raw_until_closed(server, b"POST /api/v1/notifications/send HTTP/1.1\r\n"
                                       b"Host: x\r\nX-Api-Key: hk_nothing\r\n"
                                       b"Content-Type: application/json\r\n"
                                       b"Content-Length: 20000000\r\n"
                                       b"Expect: 100-continue\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:40]
    assert b"100 Continue" not in answer


class _Buffered:
    """A socket's buffered reader lent to http.client.HTTPResponse, which reads through
    ``makefile``: what the reader already holds stays part of the response."""

    def __init__(self, reader) -> None:
        self.reader = reader

    def makefile(self, mode: str):
        return self.reader


@pytest.mark.slow
def test_a_body_within_the_limit_still_gets_100_continue(server):
    # A key that authenticates, so the app must read the body to answer: a 401 for an
    # unknown key came without it, sometimes in the same read as the 100 Continue.
    key = factories.api_key(factories.workspace())
    with socket.create_connection(("127.0.0.1", server), timeout=30) as sock, \
            sock.makefile("rb") as reader:
        sock.sendall(b"POST /api/v1/notifications/send HTTP/1.1\r\nHost: x\r\n"
                     b"X-Api-Key: " + key.encode() + b"\r\n"
                     b"Content-Type: application/json\r\n"
                     b"Content-Length: 2\r\nExpect: 100-continue\r\n\r\n")
        # Line by line: TCP keeps no message boundaries, one read may hold more or less.
        assert reader.readline() == b"HTTP/1.1 100 Continue\r\n"
        assert reader.readline() == b"\r\n"
        sock.sendall(b"{}")
        response = http.client.HTTPResponse(_Buffered(reader))  # type: ignore[arg-type]
        response.begin()
        problem = json.loads(response.read())
    # The app read the body it was promised: {} is not a notification request.
    assert response.status == 400
    assert problem["errorCode"] == "notifications.validation_failed"


@pytest.mark.slow
def test_serve_opens_no_control_socket_another_instance_would_share(server, home):
    # gunicorn's default would be $HOME/.gunicorn/gunicorn.ctl, one path for every server.
    assert list(home.iterdir()) == []


@pytest.mark.slow
def test_a_refused_body_is_not_read_and_its_connection_closes(server):
    # 1 MB announced, 10 bytes sent: the unknown key's 401 comes without the rest, and says
    # Connection: close, so the worker reads no more of a body the app refused (an
    # attacker's 1.8 MB previews would otherwise each be read off the socket).
    with socket.create_connection(("127.0.0.1", server), timeout=30) as sock, \
            sock.makefile("rb") as reader:
        sock.sendall(b"POST /api/v1/notifications/send HTTP/1.1\r\nHost: x\r\n"
                     b"X-Api-Key: hk_nothing\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 1000000\r\n\r\n" + b'{"tags": [')
        response = http.client.HTTPResponse(_Buffered(reader))  # type: ignore[arg-type]
        response.begin()
        response.read()
        assert response.status == 401
        assert response.getheader("Connection") == "close"
        # The server closes its side (its FIN follows the answer): the end, not more answers.
        assert sock.recv(1) == b""


@pytest.mark.slow
def test_an_answer_after_reading_the_body_keeps_the_connection(server):
    # A refusal after the body was read (malformed JSON: a 400) keeps the connection.
    key = factories.api_key(factories.workspace())
    with socket.create_connection(("127.0.0.1", server), timeout=30) as sock, \
            sock.makefile("rb") as reader:
        sock.sendall(b"POST /api/v1/notifications/send HTTP/1.1\r\nHost: x\r\n"
                     b"X-Api-Key: " + key.encode() + b"\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
        response = http.client.HTTPResponse(_Buffered(reader))  # type: ignore[arg-type]
        response.begin()
        response.read()
        assert response.status == 400
        assert response.getheader("Connection") == "keep-alive"
