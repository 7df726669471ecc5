"""Tracking endpoints behind signed URLs, and the dev inbox pages."""

from __future__ import annotations

import json
import re
import uuid

from engine.database.models import Notification, Suppression, TrackingEvent
from engine.database.models.inbox import InboxMessage
from engine.delivery.jobs import deliver_notification
from engine.delivery.tracking import apply_tracking, click_url, open_url, unsubscribe_url
from tests import factories


def _path(url: str) -> str:
    return url.replace("http://herald.test", "")


def test_click_redirects_only_to_the_signed_url_and_records_it(client, settings):
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload())
    url = click_url(str(n.id), "ada@example.net", "https://example.org/offer?x=1")
    response = client.get(_path(url))
    assert response.status_code == 302
    assert response.headers["Location"] == "https://example.org/offer?x=1"
    event = TrackingEvent.get()
    assert (event.kind, event.recipient, event.url) == ("click", "ada@example.net",
                                                        "https://example.org/offer?x=1")
    token = url.rsplit("/", 1)[1]
    forged = token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB")
    assert client.get(f"/t/c/{forged}").status_code == 404
    assert client.get("/t/c/https%3A%2F%2Fevil.example").status_code == 404


def test_a_link_with_a_line_break_leads_where_a_browser_would_go(client, settings):
    # `&#10;` inside an href: a browser drops the newline (WHATWG URL parsing), and a
    # Location header could not carry it (it was a 500 for every click).
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload())
    tracked = apply_tracking('<a href="https://x.example/&#10;a&#13;b&#9;c">x</a>',
                             notification_id=str(n.id), track_opens=False, track_clicks=True)
    response = client.get(_click_path(tracked))
    assert response.status_code == 302
    assert response.headers["Location"] == "https://x.example/abc"
    # A link signed before links were read this way holds the raw newline: read it now.
    old = click_url(str(n.id), None, " https://x.example/\na\x01b\r\n")
    response = client.get(_path(old))
    assert (response.status_code, response.headers["Location"]) == (
        302, "https://x.example/a%01b")


def _click_path(html: str) -> str:
    return _path(re.search(r'href="(http://herald\.test/t/c/[^"]+)"', html).group(1))


def _post(client, path: str, body: dict, key: str):
    return client.post(path, data=json.dumps(body), content_type="application/json",
                       headers={"X-Api-Key": key})


def test_a_preview_link_does_not_redirect_and_the_sent_one_does(client, settings):
    ws = factories.workspace()
    tpl = factories.template(ws, content={"body": '<a href="https://example.org/x">x</a>',
                                          "trackClicks": True, "trackOpens": True},
                             defaults={"to": ["ada@example.net"]})
    key = factories.api_key(ws)
    body = {"tenantId": str(ws.id), "templateId": str(tpl.id), "tags": []}
    preview = _post(client, "/api/v1/notifications/preview", body, key).json
    html = preview["email"]["finalBodies"]["htmlBody"]
    response = client.get(_click_path(html))
    assert response.status_code == 404, "a preview signs any link: it must not be a redirect"
    assert response.mimetype == "application/problem+json" and "Location" not in response.headers
    pixel = client.get(_path(re.search(r'src="([^"]+)"', html).group(1)))
    assert pixel.status_code == 200 and pixel.mimetype == "image/gif"
    assert TrackingEvent.select().count() == 0

    assert _post(client, "/api/v1/notifications/send", body, key).status_code == 202
    assert deliver_notification(str(Notification.get().id)) == "delivered"
    response = client.get(_click_path(InboxMessage.get().html))
    assert response.status_code == 302
    assert response.headers["Location"] == "https://example.org/x"
    assert TrackingEvent.get().kind == "click"


def test_a_click_for_no_notification_or_a_deleted_one_does_not_redirect(client, settings):
    unknown = click_url(str(uuid.uuid4()), "ada@example.net", "https://example.org/x")
    response = client.get(_path(unknown))
    assert response.status_code == 404 and response.mimetype == "application/problem+json"
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload())
    url = click_url(str(n.id), "ada@example.net", "https://example.org/x")
    assert client.get(_path(url)).status_code == 302
    n.delete_instance()
    assert client.get(_path(url)).status_code == 404
    assert client.get(_path(click_url("preview", None, "https://example.org/x"))).status_code == 404


def test_open_pixel_records_and_always_answers_a_gif(client, settings):
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload())
    html = apply_tracking("<html><body>x</body></html>", notification_id=str(n.id),
                          track_opens=True, track_clicks=False)
    src = re.search(r'src="([^"]+)"', html).group(1)
    response = client.get(_path(src))
    assert response.status_code == 200 and response.mimetype == "image/gif"
    assert TrackingEvent.get().kind == "open"
    assert client.get("/t/o/forged").mimetype == "image/gif"
    assert TrackingEvent.select().count() == 1


def test_one_click_unsubscribe_suppresses_on_post_only(client, settings):
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload())
    path = _path(unsubscribe_url(str(n.id), "Ada@Example.net"))
    page = client.get(path)
    assert page.status_code == 200 and b"<form" in page.data
    assert Suppression.select().count() == 0, "a GET (link scanner) must not unsubscribe"
    response = client.post(path, data="List-Unsubscribe=One-Click",
                           content_type="application/x-www-form-urlencoded")
    assert response.status_code == 200
    assert Suppression.get().address == "ada@example.net"
    assert client.post("/t/u/forged").status_code == 404


def test_dev_inbox_lists_and_empties(client, settings):
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload(html="<p><b>bold</b> & more</p>"))
    deliver_notification(str(n.id))
    messages = client.get("/dev/inbox/messages").json
    assert len(messages) == 1
    message = messages[0]
    assert set(message) >= {"channel", "from", "to", "cc", "bcc", "subject", "text", "html",
                            "raw", "headers"}
    assert message["from"] == "hello@example.com" and message["raw"].startswith("Content-Type")
    page = client.get("/dev/inbox")
    assert page.status_code == 200 and b"Hello Ada" in page.data
    assert b"<b>bold</b>" not in page.data, "mail HTML is escaped into a sandboxed iframe"
    assert client.delete("/dev/inbox/messages").json == {"deleted": 1}
    assert InboxMessage.select().count() == 0


def test_dev_inbox_is_absent_in_production(settings):
    from cli.app import create_app

    app = create_app(settings.with_changes(env="production", email_provider="smtp://mx:25",
                                           sms_provider=""))
    assert app.test_client().get("/dev/inbox/messages").status_code == 404


def _framing_refused(response) -> None:
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]


def test_pages_outside_the_web_application_refuse_framing_and_sniffing(client, settings):
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload())
    _framing_refused(client.get("/dev/inbox"))
    _framing_refused(client.get(_path(unsubscribe_url(str(n.id), "ada@example.net"))))
    docs = client.get("/docs")
    _framing_refused(docs)
    assert "script-src" in docs.headers["Content-Security-Policy"], "its own policy is kept"
    assert client.get("/dev/inbox/messages").headers["X-Content-Type-Options"] == "nosniff"


def test_the_dev_inbox_answers_only_loopback_host_names(client, settings):
    ws = factories.workspace()
    deliver_notification(str(factories.notification(ws, factories.email_payload()).id))
    for host in ("localhost", "localhost:8000", "127.0.0.1:8000", "[::1]:8000", "127.0.0.2"):
        assert len(client.get("/dev/inbox/messages", headers={"Host": host}).json) == 1, host
    for host in ("rebind.attacker.example", "rebind.attacker.example:8000", "localhost.evil",
                 "10.0.0.5:8000", "127.0.0.1.nip.io"):
        for method in ("get", "delete"):
            response = getattr(client, method)("/dev/inbox/messages", headers={"Host": host})
            assert response.status_code == 403, (host, method)
        assert client.get("/dev/inbox", headers={"Host": host}).status_code == 403
    assert InboxMessage.select().count() == 1


def test_one_token_replayed_is_rate_limited_and_recorded_once(client, settings, windows_held):
    from engine.delivery import tracking_guard

    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload())
    path = _path(open_url(str(n.id), "ada@example.net"))
    limit = tracking_guard.PER_TOKEN_PER_MINUTE
    statuses = [client.get(path).status_code for _ in range(limit + 5)]
    assert statuses == [200] * limit + [429] * 5, statuses
    assert TrackingEvent.select().where(TrackingEvent.kind == "open").count() == 1


def test_repeated_clicks_of_one_recipient_and_link_are_recorded_once(client, settings):
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload())
    first = _path(click_url(str(n.id), "ada@example.net", "https://example.org/a"))
    other = _path(click_url(str(n.id), "ada@example.net", "https://example.org/b"))
    bob = _path(click_url(str(n.id), "bob@example.net", "https://example.org/a"))
    for path in (first, first, first, other, bob, bob):
        assert client.get(path).status_code == 302
    clicks = TrackingEvent.select().where(TrackingEvent.kind == "click")
    assert sorted((c.recipient, c.url) for c in clicks) == [
        ("ada@example.net", "https://example.org/a"), ("ada@example.net", "https://example.org/b"),
        ("bob@example.net", "https://example.org/a")]


def test_one_address_is_rate_limited_across_tokens(client, settings, monkeypatch,
                                                  windows_held):
    from engine.delivery import tracking_guard

    monkeypatch.setattr(tracking_guard, "PER_IP_PER_MINUTE", 5)
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload())
    paths = [_path(open_url(str(n.id), f"r{i}@example.net")) for i in range(12)]
    statuses = [client.get(p, environ_base={"REMOTE_ADDR": "203.0.113.9"}).status_code
                for p in paths]
    assert statuses == [200] * 5 + [429] * 7, statuses
    other = client.get(paths[0], environ_base={"REMOTE_ADDR": "203.0.113.10"})
    assert other.status_code == 200
