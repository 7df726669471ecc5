"""The API's part of the application: flask-smorest with problem details, the API's
blueprints, and the request hooks every request goes through. The factory that puts the
API and the web application side by side is cli/app.py."""

from __future__ import annotations

import logging

from flask import Flask, current_app, g, request
from flask_smorest import Api
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from api import framing, problems
from api.docs import blueprint as docs
from api.health import QUIET_PATHS
from api.health import blueprint as health
from api.inbound import blueprint as inbound
from api.notifications import blp as notifications
from api.schemas import NotificationRequest, ProblemDetails
from api.sender_confirmation import blueprint as sender_confirmation
from api.tracking import blueprint as tracking
from config.settings import Settings, provider_scheme_of, provider_urls
from engine.database.db import database, drop_connection
from engine.errors import ApiError
from engine.observability import context
from engine.observability.outages import RETRY_AFTER_SECONDS, dependency_of, incidents

MAX_BODY_BYTES = 10 * 1024 * 1024
log = logging.getLogger("herald.api")


# The blueprints of the operations a client calls with an API key: JSON in and out, no
# cookie session, no page (the web application's hooks skip them, cli/app.py).
KEYED_BLUEPRINTS = frozenset({notifications.name})

# Paths whose errors are always problem details, whoever asks.
API_PATHS = ("/api/", "/openapi/", "/healthz", "/readyz", "/metrics")


class HeraldApi(Api):
    """flask-smorest with RFC 7807 problem details instead of its own error format."""

    ERROR_SCHEMA = ProblemDetails
    # Every status is documented explicitly with its own example; no catch-all "default".
    DEFAULT_ERROR_RESPONSE_NAME = None

    def handle_http_exception(self, error: HTTPException):
        # A URL no route matched, asked by a browser outside the API's paths: the web
        # application's page (web.init_app puts its maker here), not problem details.
        html_page = current_app.extensions.get("herald.html_error")
        if html_page and request.blueprint is None and not request.path.startswith(API_PATHS):
            shown = html_page(error)
            if shown is not None:
                return shown
        if isinstance(error, RequestEntityTooLarge):
            return problems.bare(413)
        if error.code and error.code >= 500:
            log.error("unhandled error", exc_info=error.original_exception
                      if hasattr(error, "original_exception") else None)
        # Keep what the exception says beyond its body (Allow on a 405, for one).
        extra = {k: v for k, v in error.get_headers() if k.lower() != "content-type"}
        return problems.problem(error.code or 500, error.description if error.code != 500
                                else None, headers=extra)


def init_app(app: Flask, settings: Settings) -> None:
    """The API's part of the application (cli/app.py makes it): its configuration, the
    spec's operations and their OpenAPI document, the docs, health, tracking, sender
    confirmation and provider webhooks, and the dev inbox when it is in use."""
    app.config.update(
        MAX_CONTENT_LENGTH=MAX_BODY_BYTES,
        API_TITLE="Herald notification service",
        API_VERSION="1.0.0",
        OPENAPI_VERSION="3.0.3",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi/v1.json",
        JSON_SORT_KEYS=False,
    )
    api = HeraldApi(app, spec_kwargs={"info": {
        "description": "Send templated email, SMS and signed webhooks by template id."}})
    api.spec.components.security_scheme(
        "ApiKey", {"type": "apiKey", "in": "header", "name": "X-Api-Key"})
    api.spec.components.schema("NotificationRequest", schema=NotificationRequest)
    api.register_blueprint(notifications)
    # flask-smorest registers its pagination schema unasked; Herald has no paginated operation.
    api.spec.components.schemas.pop("PaginationMetadata", None)
    app.register_blueprint(docs)
    _register_extra_blueprints(app, settings)


def install_request_hooks(app: Flask) -> None:
    """What every request of the process goes through, a page's as an API call's: its
    correlation id, the body limit, its database connection, problem details for an
    ApiError or an unexpected error (the web blueprints answer their own in HTML), and the
    framing policy of every response."""
    _install_hooks(app)
    framing.install(app)


def _register_extra_blueprints(app: Flask, settings: Settings) -> None:
    app.register_blueprint(health)
    app.register_blueprint(tracking)
    app.register_blueprint(sender_confirmation)
    app.register_blueprint(inbound)
    inbox_in_use = any(provider_scheme_of(url) == "inbox"
                       for p in (settings.email_provider, settings.sms_provider)
                       for url in provider_urls(p))
    if inbox_in_use and not settings.production:
        from api.inbox import blueprint as inbox
        from api.webhook_catcher import blueprint as webhook_catcher

        app.register_blueprint(inbox)
        app.register_blueprint(webhook_catcher)


def _read_bounded(stream, limit: int) -> bytes | None:
    """A chunked body read in pieces: None as soon as it passes ``limit`` (never buffered whole)."""
    pieces: list[bytes] = []
    size = 0
    while True:
        piece = stream.read(64 * 1024)
        if not piece:
            return b"".join(pieces)
        size += len(piece)
        if size > limit:
            return None
        pieces.append(piece)


def _install_hooks(app: Flask) -> None:
    @app.before_request
    def start() -> object:
        # The request and g themselves, not their proxies: each attribute read through a
        # proxy first fails on the proxy (an AttributeError built and dropped).
        req, glob = request._get_current_object(), g._get_current_object()  # type: ignore[attr-defined]
        glob.correlation_id = cid = problems.correlation_id(req.environ)
        # Every log line of this request carries it (engine/observability/context.py).
        glob.log_context = context.correlation_id.set(cid)
        # The gateway check: refuse before a byte of the body is read or parsed.
        length = req.content_length
        if length is not None and length > MAX_BODY_BYTES:
            return problems.bare(413)
        if length is None and "chunked" in req.headers.get("Transfer-Encoding", "").lower():
            body = _read_bounded(req.environ["wsgi.input"], MAX_BODY_BYTES)
            if body is None:
                return problems.bare(413)
            glob.raw_body = body
        if req.path in QUIET_PATHS:  # health and metrics open no connection
            return None
        # One connection per server thread, kept between requests (pooled on PostgreSQL);
        # asked of the database itself, not through peewee's proxy, whose every read first
        # fails the ordinary way (an AttributeError built and dropped).
        (database.obj or database).connect(reuse_if_open=True)
        return None

    @app.after_request
    def stamp(response):
        glob = g._get_current_object()  # type: ignore[attr-defined]
        response.headers["X-Correlation-Id"] = glob.get("correlation_id") or ""
        if incidents.open:  # says when an outage is over, once it has been quiet
            incidents.tick()
        return response

    @app.teardown_request
    def unbind(_error: BaseException | None) -> None:
        token = g._get_current_object().pop("log_context", None)  # type: ignore[attr-defined]
        if token is not None:
            context.correlation_id.reset(token)

    @app.errorhandler(ApiError)
    def api_error(err: ApiError):
        return problems.from_api_error(err)

    @app.errorhandler(Exception)
    def unexpected(err: Exception):
        # HTTPExceptions go to HeraldApi.handle_http_exception (the more specific handler).
        if (part := dependency_of(err)) is not None:
            return unavailable(part, err)
        log.exception("unhandled error on %s", request.path)
        return problems.problem(500)


def unavailable(part: str, err: BaseException):
    """503 service.unavailable with Retry-After; one log line per incident, not per request.
    A connection that failed is dropped, so the next request opens a fresh one."""
    incidents.failed(part, err)
    if part == "database":
        drop_connection()
    return problems.problem(
        503, f"The service cannot reach its {part} just now; try again after Retry-After.",
        "service.unavailable", headers={"Retry-After": str(RETRY_AFTER_SECONDS)})
