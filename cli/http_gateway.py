"""What gunicorn answers before the app sees a request, kept to the API's contract.

Its own errors: a request gunicorn cannot parse (a header line over 8,190 bytes, such as
an oversized X-Api-Key; more than 100 headers; a request line over 4,094 bytes; a transfer
coding it does not support) gets its answer from gunicorn, as an HTML page by default. The
spec makes every error ``application/problem+json``, so each API worker writes these as
problem details with gunicorn's status and reason: no errorCode (the spec names none),
``instance`` null (the path may never have been read).

``Expect: 100-continue``: gunicorn sends ``100 Continue`` before the app runs, so a client
announcing a body over the limit would upload all of it only to be refused. For such a
request it sends none: the app answers its bare 413 at once, and the connection closes,
since the body it announced was never sent (RFC 9110 10.1.1).

A refusal before the body is read (a preview over the person's limit or with no render
slot free, an API request without a valid key, a body over the limit): gunicorn keeps such
a connection open, so before its next request it reads the unread body off the socket
(64 KB, then a close), and it ignores the app's own ``Connection: close``. CloseUnread
tells gunicorn to close instead: the answer says ``Connection: close`` and the worker reads
no more of a body the app has refused (RFC 9112 9.6), however many an attacker sends.
"""

from __future__ import annotations

import json
import secrets
import socket
import threading
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from gunicorn import util

# What gunicorn says of the error can quote the request: enough to tell which rule, no more.
_DETAIL_LIMIT = 200


def write_problem(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """``gunicorn.util.write_error``'s signature and contract, with a problem details body."""
    correlation = uuid.uuid4().hex
    detail = f"{reason}: {mesg}" if mesg else reason
    if len(detail) > _DETAIL_LIMIT:
        detail = detail[:_DETAIL_LIMIT - 1] + "…"
    body = json.dumps({
        "type": "about:blank", "title": reason, "status": status_int, "detail": detail,
        "instance": None, "errorCode": None, "correlationId": correlation,
        "traceId": secrets.token_hex(16),
    }).encode()
    head = (f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
            f"Content-Type: application/problem+json\r\nContent-Length: {len(body)}\r\n"
            f"X-Correlation-Id: {correlation}\r\n\r\n")
    util.write_nonblock(sock, head.encode("latin-1") + body)


def install() -> None:
    """Make this process's gunicorn write its own error answers as problem details."""
    util.write_error = write_problem


_serving = threading.local()  # gunicorn's request on this worker thread (pre_request)


def pre_request(worker: Any, req: Any) -> None:
    """gunicorn's pre_request: note the request for CloseUnread (the app runs on this
    thread next), and send no ``100 Continue`` for a body the app will refuse."""
    _serving.request = req
    refuse_before_continue(worker, req)


def _unread(req: Any) -> bool:
    """Whether bytes of the request's announced body are still on the socket."""
    reader = getattr(getattr(req, "body", None), "reader", None)
    left = getattr(reader, "length", 0)  # a Content-Length body; chunked ones are rare here
    return isinstance(left, int) and left > 0


class CloseUnread:
    """WSGI middleware for `herald serve`: an error answer (4xx, 5xx) given while the
    request's body is unread closes the connection instead of reading the body off it."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app

    def __call__(self, environ: dict, start_response: Callable[..., Any]) -> Iterable[bytes]:
        req = _serving.__dict__.pop("request", None)  # None outside gunicorn
        if req is None:
            return self.app(environ, start_response)

        def start(status: str, headers: list, exc_info: Any = None) -> Any:
            if status[:1] in ("4", "5") and _unread(req):
                req.must_close = True  # gunicorn: "Connection: close", and no drain
            return start_response(status, headers, exc_info)

        return self.app(environ, start)


def refuse_before_continue(worker: Any, req: Any) -> None:
    """gunicorn's pre_request: no ``100 Continue`` for a body the app will refuse."""
    if not req._expected_100_continue:
        return
    from api.app import MAX_BODY_BYTES  # loaded in the worker already; not in the master

    length = next((value for name, value in req.headers if name == "CONTENT-LENGTH"), "")
    if length.isdigit() and int(length) > MAX_BODY_BYTES:
        req._expected_100_continue = False
        req.must_close = True
