"""The application factory's Flask (cli/app.py): what it keeps between requests changes
no answer."""

from __future__ import annotations

from flask import request, url_for

from cli.app import create_app


def _adapter_and_host(app, **environ):
    with app.test_request_context("/api/v1/notifications/send", method="POST",
                                  environ_overrides=environ) as ctx:
        return ctx.url_adapter, request.host, url_for("core.workspaces", _external=True)


def test_requests_alike_share_one_url_adapter_and_others_get_their_own(settings):
    app = create_app(settings)
    first, host, link = _adapter_and_host(app, HTTP_HOST="herald.example.com")
    again, same_host, _ = _adapter_and_host(app, HTTP_HOST="herald.example.com")
    assert again is first and same_host == host == "herald.example.com"
    other, other_host, other_link = _adapter_and_host(app, HTTP_HOST="Other.Example.com:8080")
    assert other is not first and other_host == "Other.Example.com:8080"
    assert link == "http://herald.example.com/workspaces"
    assert other_link == "http://other.example.com:8080/workspaces"


def test_a_route_still_matches_its_method_and_path(settings):
    client = create_app(settings).test_client()
    assert client.get("/api/v1/notifications/send").status_code == 405
    assert client.post("/api/v1/notifications/send", json={}).status_code == 401
    assert client.post("/api/v1/notifications/nowhere", json={}).status_code == 404
    assert client.post("/api/v1/notifications/send", json={}).status_code == 401
