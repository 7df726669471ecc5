"""The cookie session is the web application's alone, and every web page, the reports
included, carries the web application's headers (docs/web.md, "Security")."""

from __future__ import annotations

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
