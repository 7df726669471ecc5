"""Topics end to end: Marketing email of a topic sent through the API, delivered by the
worker's job to a real aiosmtpd server, its unsubscribe link opened (a GET changes
nothing), the preferences saved or the one-click POST made: the next email of that topic
is suppressed, another topic's and every Transactional email still arrive."""

from __future__ import annotations

import email
import json
import re
import time
from email import policy

import pytest

from engine.catalog import topics
from engine.database.models import Notification, Suppression, TrackingEvent
from engine.delivery.jobs import deliver_notification
from engine.delivery.tracking import make_token
from tests import factories

SEND = "/api/v1/notifications/send"
ADA = "ada@example.net"




@pytest.fixture
def shop(settings):
    """A workspace with the topics news and product, a Marketing template of each and a
    Transactional one, and a key."""
    ws = factories.workspace()
    topics.add(ws.id, "news", "The monthly newsletter")
    topics.add(ws.id, "product", "New features")
    return {"ws": ws, "key": factories.api_key(ws),
            "news": factories.template(ws, content={"emailType": "Marketing", "topic": "news"}),
            "product": factories.template(ws, content={"emailType": "Marketing",
                                                       "topic": "product"}),
            "reset": factories.template(ws)}


def send(client, shop, kind: str, to: str = ADA) -> str:
    """The outcome of a send of ``kind`` to ``to`` through the API and the worker's job."""
    body = {"tenantId": str(shop["ws"].id), "templateId": str(shop[kind].id),
            "tags": [{"key": "name", "value": "Ada"}], "emailOptions": {"to": [to]}}
    response = client.post(SEND, data=json.dumps(body), content_type="application/json",
                           headers={"X-Api-Key": shop["key"]})
    assert response.status_code == 202, response.json
    row = Notification.select().order_by(Notification.created_at.desc()).first()
    return deliver_notification(str(row.id))


def link_path(raw: bytes) -> str:
    message = email.message_from_bytes(raw, policy=policy.default)
    link = re.fullmatch(r"<(https?://[^>]+)>", str(message["List-Unsubscribe"]).strip()).group(1)
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    return re.sub(r"^https?://[^/]+", "", link)


def test_saving_preferences_without_news_stops_news_only(client, smtp, shop):
    assert send(client, shop, "news") == "delivered"
    path = link_path(smtp.received[-1].content)
    page = client.get(path)
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "Email preferences" in html and 'value="news"' in html and 'value="product"' in html
    assert "Content-Security-Policy" in page.headers and "script-src 'self'" in \
        page.headers["Content-Security-Policy"]
    client.get(path)  # a scanner opening it twice
    assert Suppression.select().count() == 0, "a GET must change nothing"
    saved = client.post(path + "/preferences", data={"action": "save", "topic": ["product"]})
    assert saved.status_code == 303
    again = client.get(saved.headers["Location"]).get_data(as_text=True)
    assert "Your preferences are saved." in again
    assert re.search(r'value="news"(?![^>]*checked)', again)
    assert re.search(r'value="product"[^>]*checked', again)
    assert [(r.address, r.scope, r.reason) for r in Suppression.select()] == [
        (ADA, "topic:news", "unsubscribe")]
    assert TrackingEvent.get().kind == "unsubscribe"  # counted in the reports
    arrived = len(smtp.received)
    assert send(client, shop, "news") == "suppressed"
    assert send(client, shop, "product") == "delivered"
    assert send(client, shop, "reset") == "delivered"
    assert len(smtp.received) == arrived + 2
    # Choosing news again lifts the recipient's own topic suppression.
    client.post(path + "/preferences", data={"action": "save", "topic": ["news", "product"]})
    assert Suppression.select().count() == 0
    assert send(client, shop, "news") == "delivered"


def test_one_click_leaves_the_messages_topic_only(client, smtp, shop):
    assert send(client, shop, "product") == "delivered"
    path = link_path(smtp.received[-1].content)
    response = client.post(path, data="List-Unsubscribe=One-Click",
                           content_type="application/x-www-form-urlencoded")
    assert response.status_code == 200 and b"product" in response.data
    assert [(r.scope, r.reason) for r in Suppression.select()] == [("topic:product",
                                                                    "unsubscribe")]
    assert send(client, shop, "product") == "suppressed"
    assert send(client, shop, "news") == "delivered"
    assert send(client, shop, "reset") == "delivered"


def test_unsubscribe_from_all_stops_marketing_and_never_transactional(client, smtp, shop):
    assert send(client, shop, "news") == "delivered"
    path = link_path(smtp.received[-1].content)
    assert client.post(path + "/preferences", data={"action": "all"}).status_code == 303
    assert [r.scope for r in Suppression.select()] == ["marketing"]
    assert send(client, shop, "news") == "suppressed"
    assert send(client, shop, "product") == "suppressed"
    assert send(client, shop, "reset") == "delivered"
    page = client.get(path).get_data(as_text=True)
    assert "unsubscribed from all marketing email" in page
    assert not re.search(r'value="(news|product)"[^>]*checked', page)


def test_a_forged_expired_or_other_purpose_link_changes_nothing(client, smtp, shop):
    assert send(client, shop, "news") == "delivered"
    path = link_path(smtp.received[-1].content)
    token = path.rsplit("/", 1)[1]
    assert client.get(f"/t/u/{token}x").status_code == 404
    assert client.post(f"/t/u/{token}x/preferences", data={"action": "all"}).status_code == 404
    old = make_token("unsubscribe", {"n": "x", "r": ADA, "w": str(shop["ws"].id),
                                     "i": int(time.time()) - 31 * 86400})
    assert client.get(f"/t/u/{old}").status_code == 404, "past the 30-day retention"
    assert client.post(f"/t/u/{old}", data="List-Unsubscribe=One-Click").status_code == 404
    fresh = make_token("unsubscribe", {"n": "x", "r": ADA, "w": str(shop["ws"].id),
                                       "i": int(time.time()) - 29 * 86400})
    assert client.get(f"/t/u/{fresh}").status_code == 200
    click = make_token("click", {"n": "x", "r": ADA, "w": str(shop["ws"].id),
                                 "i": int(time.time())})
    assert client.post(f"/t/u/{click}/preferences", data={"action": "all"}).status_code == 404
    assert Suppression.select().count() == 0


def test_a_transactional_email_carries_no_unsubscribe_link(client, smtp, shop):
    assert send(client, shop, "reset") == "delivered"
    message = email.message_from_bytes(smtp.received[-1].content, policy=policy.default)
    assert message["List-Unsubscribe"] is None
