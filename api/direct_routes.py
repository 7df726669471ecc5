"""The send and the preview answered straight from the WSGI environment, in front of Flask.

They are most of what an API host serves, and Flask's request cycle around them (its
request and application contexts, the URL match, the session interface, three hook lists,
the MethodView's dispatch, a Response object and werkzeug's WSGI headers) cost about as
much CPU as a bare Flask endpoint's whole request: a third of a preview's. Here a plain
`POST` to either path, with its Content-Length given, does what that cycle does for it and
nothing else: the correlation id and its log context (the API's ``start`` hook), the
database connection, the operation (api/notifications.py, the same code the Flask views
call), and the answer with the headers the ``stamp`` and ``protect`` hooks write.

An error takes Flask's own path: the request's context is made then, and the exception
goes to the same handlers, hooks and teardown as any view's, so a problem's body and
headers are the ones Flask gives. Any other request to these paths (another method, a
chunked body, one over the size limit, no Content-Length) goes to Flask whole, which
answers it as before; the routes stay registered there and in the OpenAPI document.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from flask import Flask, g

from api import problems
from api.app import MAX_BODY_BYTES
from api.notifications import (
    STATUSES,
    Answer,
    Call,
    declared_length,
    json_headers,
    preview_answer,
    read_exactly,
    send_answer,
)
from engine.database.db import database
from engine.observability import context
from engine.observability.outages import incidents

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
OPERATIONS: dict[str, Callable[[Call], Answer]] = {
    "/api/v1/notifications/send": send_answer,
    "/api/v1/notifications/preview": preview_answer,
}
_STATUS_LINES = {code: line for code, (line, _) in STATUSES.items()}  # "202 ACCEPTED"


class DirectRoutes:
    """WSGI middleware: the two operations answered here, every other request by ``wsgi_app``
    (Flask's, which ``app`` also uses for an operation's error)."""

    def __init__(self, app: Flask, wsgi_app: WsgiApp) -> None:
        self.app = app
        self.wsgi_app = wsgi_app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]
                 ) -> Iterable[bytes]:
        operation = OPERATIONS.get(environ.get("PATH_INFO", ""))
        size = declared_length(environ)
        if operation is None or environ.get("REQUEST_METHOD") != "POST" \
                or "HTTP_TRANSFER_ENCODING" in environ or size is None \
                or size > MAX_BODY_BYTES or "wsgi.input" not in environ:
            return self.wsgi_app(environ, start_response)
        cid = problems.correlation_id(environ)
        token = context.correlation_id.set(cid)  # every log line of the request carries it
        try:
            # One connection per server thread, kept between requests (the ``start`` hook's).
            (database.obj or database).connect(reuse_if_open=True)
            answer = operation(Call(
                environ.get("HTTP_X_API_KEY"), environ.get("REMOTE_ADDR") or "", size,
                lambda: read_exactly(environ["wsgi.input"], size), cid,
                environ.get("HTTP_IDEMPOTENCY_KEY")))
        except Exception as err:
            return self._error(environ, start_response, err, cid)
        finally:
            context.correlation_id.reset(token)
        data = answer.text.encode()
        headers = json_headers(data)
        if answer.replayed:
            headers.append(("Idempotent-Replayed", "true"))
        # As Flask's hooks add them: ``protect``, installed last, runs first.
        headers += [("X-Content-Type-Options", "nosniff"),
                    ("X-Correlation-Id", answer.correlation_id)]
        if incidents.open:  # says when an outage is over, once it has been quiet
            incidents.tick()
        start_response(_STATUS_LINES[answer.status], headers)
        return [data]

    def _error(self, environ: dict[str, Any], start_response: Callable[..., Any],
               err: Exception, cid: str) -> Iterable[bytes]:
        """The answer Flask gives when a view raises ``err``: its error handlers, then the
        response's hooks and the request's teardown, in the request's context."""
        app = self.app
        ctx = app.request_context(environ)
        error: BaseException | None = None
        ctx.push()
        try:
            g.correlation_id = cid
            g.log_context = context.correlation_id.set(cid)  # reset by the teardown hook
            try:
                response = app.finalize_request(app.handle_user_exception(err))
            except Exception as unhandled:
                error = unhandled
                response = app.handle_exception(unhandled)
            return response(environ, start_response)
        finally:
            ctx.pop(error)
