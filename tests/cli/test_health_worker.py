"""Which requests `herald serve` answers on the thread that accepts: a whole /healthz head
with no body, and nothing that could make that thread wait."""

from __future__ import annotations

import pytest

from cli.health_worker import answers_here

HEAD = b"GET /healthz HTTP/1.1\r\nHost: herald\r\n\r\n"


@pytest.mark.parametrize("head", [
    HEAD,
    b"HEAD /healthz HTTP/1.1\r\nHost: herald\r\n\r\n",
    b"GET /healthz?probe=1 HTTP/1.0\r\n\r\n",
    HEAD + b"GET /healthz HTTP/1.1\r\n",  # more behind it: still one answer, then a close
])
def test_a_whole_healthz_head_is_answered_here(head):
    assert answers_here(head)


@pytest.mark.parametrize("head", [
    b"GET /healthz HTTP/1.1\r\nHost: herald\r\n",  # not all of it yet
    b"GET /healthz HTTP/1.1\r\nContent-Length: 10\r\n\r\n",  # a body to drain
    b"GET /healthz HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
    b"GET /healthz HTTP/1.1\r\nExpect: 100-continue\r\n\r\n",
    b"GET /healthz HTTP/1.1\r\nUpgrade: h2c\r\n\r\n",
    b"POST /healthz HTTP/1.1\r\n\r\n",
    b"GET /healthzx HTTP/1.1\r\n\r\n",
    b"GET /readyz HTTP/1.1\r\n\r\n",
    b"GET / HTTP/1.1\r\nX-Path: /healthz\r\n\r\n",
    b"\x16\x03\x01\x02\x00",  # a TLS ClientHello
    b"",
])
def test_anything_else_goes_to_the_request_threads(head):
    assert not answers_here(head)


def test_the_gthread_names_the_worker_extends_are_gunicorns():
    """cli/health_worker.py overrides and uses these by name: a rename in gunicorn would
    leave /healthz queued again, or the worker broken, without an error here."""
    import inspect

    from gunicorn.workers.gthread import TConn, ThreadWorker

    for name in ("accept", "on_client_socket_readable", "on_pending_socket_readable",
                 "enqueue_req", "handle", "handle_request", "murder_pending"):
        assert callable(getattr(ThreadWorker, name)), name
    assert list(inspect.signature(ThreadWorker.handle_request).parameters) == [
        "self", "req", "conn"]
    assert list(inspect.signature(ThreadWorker.on_pending_socket_readable).parameters) == [
        "self", "conn", "client"]
    assert list(inspect.signature(TConn.close).parameters) == ["self", "graceful"]
    init = inspect.getsource(ThreadWorker.__init__)
    assert "self.pending_conns" in init and "self.keepalived_conns" in init
    assert "self.data_ready" in inspect.getsource(TConn.__init__)


def test_herald_serve_runs_this_worker_with_a_short_switch_interval_frozen(monkeypatch):
    import sys

    from cli import serve

    assert (serve.gunicorn_options("127.0.0.1", 8000, 2)["worker_class"]
            == "cli.health_worker.HealthFirstWorker")
    switched = []
    monkeypatch.setattr(serve, "_quit_once", lambda worker: None)
    monkeypatch.setattr(serve.http_gateway, "install", lambda: None)
    monkeypatch.setattr(sys, "setswitchinterval", switched.append)
    frozen = []
    monkeypatch.setattr(serve, "freeze_loaded_objects", lambda: frozen.append(True))
    serve._worker_ready(object())
    assert switched == [serve.SWITCH_INTERVAL_SECONDS] and switched[0] < sys.getswitchinterval()
    assert frozen == [True]  # the loaded app out of the collector's full walks
