"""Cookies, CSRF and response headers of the web application (docs/web.md, "Security")."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from typing import Any, TypeVar

from flask import Flask, Response, current_app, g, request
from flask.sessions import SecureCookieSessionInterface, SessionMixin
from flask_wtf.csrf import CSRFProtect

from config.settings import Settings

csrf = CSRFProtect()
View = TypeVar("View", bound=Callable[..., Any])

# The blueprints whose pages and forms this module guards (the API has its own rules).
WEB_BLUEPRINTS = frozenset({"core", "auth", "workspace", "settings", "authoring", "reports"})
# Pages without sign-in at a sessionless path (the recipient's Email preferences, from a
# signed link): the strict policy, no CSRF token (no session to bind it to; the link is
# the credential).
SESSIONLESS_PAGES = frozenset({"preferences"})
# Paths whose requests never read or write the cookie session (the API authenticates by key;
# tracking links and probes by nothing).
SESSIONLESS = ("/api/", "/t/", "/healthz", "/readyz", "/metrics")

CONTENT_SECURITY_POLICY = "; ".join((
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "object-src 'none'",
))
HTML_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    # Invitation and reset links carry their token in the path: never sent elsewhere.
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}


class WebSessions(SecureCookieSessionInterface):
    """The signed cookie session belongs to the web application: a request to the API, a
    tracking link or a probe gets Flask's null session instead (opening the cookie built a
    signer per request, about a tenth of a send's CPU: docs/performance.md)."""

    def open_session(self, app: Flask, request: object) -> SessionMixin | None:
        if getattr(request, "path", "").startswith(SESSIONLESS):
            return None  # Flask makes the null session, which it never saves
        return super().open_session(app, request)  # type: ignore[arg-type]


def _policy() -> str:
    """The CSP, with ``g.form_action``'s origins added to form-action: the single sign-on
    provider's (web/auth/single_sign_on.py), where `Sign in with single sign-on` and `Sign
    out` are sent on by a redirect, which form-action governs too."""
    extra = g.get("form_action")
    if not extra:
        return CONTENT_SECURITY_POLICY
    return CONTENT_SECURITY_POLICY.replace("form-action 'self'",
                                           "form-action 'self' " + " ".join(extra))


def session_secret(secret_key: str) -> str:
    """Flask's signing key, derived so that HERALD_SECRET_KEY itself never signs a cookie."""
    return hmac.new(secret_key.encode("utf-8"), b"herald web sessions v1",
                    hashlib.sha256).hexdigest()


def checks_csrf_itself(view: View) -> View:
    """Mark a web view that calls ``csrf.protect()`` itself, after what it must refuse
    before the request's body is read (flask-wtf reads a multipart body whole to find the
    token): the list upload takes its workspace's slot first. Put it right under the route
    decorator, so the registered view carries the mark."""
    view.csrf_in_view = True  # type: ignore[attr-defined]
    return view


def _checked_in_view() -> bool:
    view = current_app.view_functions.get(request.endpoint or "")
    return bool(getattr(view, "csrf_in_view", False))


def init_app(app: Flask, settings: Settings) -> None:
    app.config.update(
        SECRET_KEY=session_secret(settings.secret_key),
        SESSION_COOKIE_NAME="herald_session",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_SECURE=settings.public_url.startswith("https://"),
        # The server-side session (engine/people/sessions.py) sets the real lifetime, idle
        # and absolute (HERALD_SESSION_IDLE_MINUTES, HERALD_SESSION_LIFETIME_DAYS).
        PERMANENT_SESSION_LIFETIME=settings.session_lifetime_days * 86400,
        # Set at sign-in, the cookie lives as long as the server-side session can (the
        # absolute lifetime): signing it again at every request would extend nothing.
        SESSION_REFRESH_EACH_REQUEST=False,
        # Only the web blueprints are checked (below): the API authenticates by key, and the
        # one-click unsubscribe POST comes from mail clients.
        WTF_CSRF_CHECK_DEFAULT=False,
        # A token per session, not per hour: a form left open over lunch still saves.
        WTF_CSRF_TIME_LIMIT=None,
        WTF_CSRF_SSL_STRICT=True,
    )
    app.session_interface = WebSessions()
    csrf.init_app(app)

    @app.before_request
    def check_csrf() -> None:
        if request.blueprint in WEB_BLUEPRINTS and not _checked_in_view():
            csrf.protect()

    @app.after_request
    def headers(response: Response) -> Response:
        if response.mimetype != "text/html" or g.get("sandboxed_frame"):
            return response  # a frame's document carries its own sandboxing policy
        for name, value in HTML_HEADERS.items():
            response.headers.setdefault(name, value)
        if request.blueprint in WEB_BLUEPRINTS or request.blueprint in SESSIONLESS_PAGES \
                or g.get("web_page"):
            response.headers["Content-Security-Policy"] = _policy()
            # Pages show keys and secrets once: no copy may stay in a cache.
            response.headers["Cache-Control"] = "no-store"
        return response
