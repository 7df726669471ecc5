"""The cookie session is the web application's alone, and every web page, the reports
included, carries the web application's headers (docs/web.md, "Security")."""

from __future__ import annotations

import sys

import pytest
from flask import session
from flask.sessions import NullSession

from tests import factories
from tests.web.conftest import make_user
from tests.web.test_authoring_requests import Client
from web.security import CONTENT_SECURITY_POLICY


@pytest.mark.parametrize("path", ["/api/v1/notifications/send", "/t/o/token", "/healthz",
                                  "/readyz", "/metrics"])
def test_the_api_tracking_and_probes_never_open_the_cookie_session(app, path):
    with app.test_request_context(path, method="POST"):
        assert isinstance(session, NullSession)


@pytest.mark.parametrize("path", ["/", "/workspaces", "/apinotes"])
def test_web_pages_open_it(app, path):
    with app.test_request_context(path):
        assert not isinstance(session, NullSession)


def test_a_signed_in_cookie_sent_to_the_api_is_neither_read_nor_renewed(app):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "member", "Ada")
    ada = Client(app, "ada@example.com")
    answer = ada.http.post("/api/v1/notifications/send", json={})
    assert answer.status_code == 401  # the API knows keys only, not the signed-in session
    assert "Set-Cookie" not in answer.headers


def test_the_reports_pages_carry_the_web_applications_policy(app):
    ws = factories.workspace()
    make_user("ada@example.com", ws, "member", "Ada")
    ada = Client(app, "ada@example.com")
    page = ada.get(f"/w/{ws.id}/reports/")
    assert page.status_code == 200, page.text
    assert page.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert page.headers["Cache-Control"] == "no-store"


def test_pages_name_their_icon_and_favicon_ico_leads_to_it(app):
    """A browser asks /favicon.ico of a page that names no icon: a 404 there is an error in
    its console, and the pages' own icon is what it should get."""
    client = app.test_client()
    page = client.get("/")
    assert 'rel="icon" href="/assets/favicon.svg"' in page.text
    moved = client.get("/favicon.ico")
    assert moved.status_code == 301 and moved.headers["Location"] == "/assets/favicon.svg"
    icon = client.get("/assets/favicon.svg")
    assert icon.status_code == 200 and icon.mimetype == "image/svg+xml"
    assert icon.data.startswith(b"<svg")


def test_web_pages_keep_their_csrf_check_and_headers(app):
    """The web application's hooks guard its pages whatever the API's requests skip: the
    CSRF check on a form's POST, the strict policy and no-store on a page."""
    client = app.test_client()
    page = client.get("/")
    assert page.status_code == 200
    assert page.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert page.headers["Cache-Control"] == "no-store"
    assert page.headers["X-Frame-Options"] == "DENY"
    assert page.headers["Referrer-Policy"] == "same-origin"
    refused = client.post("/", data={"email": "ada@example.com", "password": "x" * 12})
    assert refused.status_code == 400
    assert "CSRF" in refused.text or "csrf" in refused.text.lower()


def test_the_single_sign_on_provider_joins_a_pages_form_action(settings, app_for):
    app = app_for(settings.with_changes(oidc_issuer="https://id.example.com",
                                        oidc_client_id="herald"))
    page = app.test_client().get("/")
    assert "form-action 'self' https://id.example.com;" in page.headers[
        "Content-Security-Policy"]


def _web_hooks(app) -> dict:
    """The app-wide hooks the web application and its extensions installed, by code."""
    hooks = [*app.before_request_funcs[None], *app.after_request_funcs[None]]
    return {getattr(hook, "__func__", hook).__code__: hook.__qualname__ for hook in hooks
            if hook.__module__.split(".")[0] in ("web", "flask_login", "flask_wtf")}


def _codes_run(call) -> set:
    seen: set = set()

    def note(frame, event, _arg):
        if event == "call":
            seen.add(frame.f_code)

    sys.setprofile(note)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen


def test_the_apis_requests_skip_the_web_applications_hooks(app):
    """A request to the API's operations runs none of the web application's app-wide hooks
    (CSRF, its headers, single sign-on's form-action, flask-login's cookie); a page runs
    every one of them."""
    client = app.test_client()
    hooks = _web_hooks(app)
    assert {"init_app.<locals>.check_csrf", "init_app.<locals>.headers", "allow_provider",
            "LoginManager._update_remember_cookie",
            "CSRFProtect.init_app.<locals>.csrf_protect"} <= set(hooks.values())
    ran = _codes_run(lambda: client.post("/api/v1/notifications/send", json={}))
    assert not {hooks[code] for code in ran if code in hooks}
    ran = _codes_run(lambda: client.get("/"))
    assert {hooks[code] for code in ran if code in hooks} == set(hooks.values())


def test_an_api_answer_carries_the_apis_headers_only(app):
    answer = app.test_client().post("/api/v1/notifications/send", json={},
                                    headers={"X-Correlation-Id": "order-1001"})
    assert answer.status_code == 401
    assert sorted(answer.headers.keys()) == ["Content-Length", "Content-Type",
                                             "X-Content-Type-Options", "X-Correlation-Id"]
    assert answer.headers["X-Correlation-Id"] == "order-1001"
