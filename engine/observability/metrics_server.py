"""The worker's own /metrics, on HERALD_WORKER_METRICS_PORT: the same text and the same
bearer token as the API's, from a small HTTP server on a thread of the worker's parent."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from config.settings import ConfigError
from engine.observability import metrics_registry

log = logging.getLogger("herald.metrics")
_STATUS = {401: "401 Unauthorized", 404: "404 Not Found"}


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Scrapes are not logged: one every few seconds would bury the deliveries."""


def metrics_app(token: str) -> Callable[..., Iterable[bytes]]:
    """A WSGI app answering GET /metrics with the token, 401 or 404 otherwise."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        status = 404 if environ.get("PATH_INFO") != "/metrics" else \
            metrics_registry.refused(environ.get("HTTP_AUTHORIZATION"), token)
        if status is not None:
            headers = [("Content-Type", "text/plain")]
            if status == 401:
                headers.append(("WWW-Authenticate", "Bearer"))
            start_response(_STATUS[status], headers)
            return [_STATUS[status].encode()]
        body, content_type = metrics_registry.exposition()
        start_response("200 OK", [("Content-Type", content_type)])
        return [body]

    return app


def serve_in_background(port: int, token: str, host: str = "0.0.0.0") -> _Server:
    """Start serving on a daemon thread; the server, to shut it down."""
    try:
        server = make_server(host, port, metrics_app(token), server_class=_Server,
                             handler_class=_Quiet)
    except OSError as err:  # the port is taken, or not ours to bind
        raise ConfigError("HERALD_WORKER_METRICS_PORT",
                          f"cannot listen on port {port}: {err.strerror or err}") from None
    threading.Thread(target=server.serve_forever, daemon=True,
                     name="herald-worker-metrics").start()
    log.info("worker metrics on http://%s:%d/metrics", host, port)
    return server
