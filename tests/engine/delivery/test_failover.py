"""Provider failover through real servers: two SMTP servers (one stopped), an HTTP vendor
that answers 503, and the breaker that skips a dead provider."""

from __future__ import annotations

import pytest
from redis import Redis

from engine import runtime
from engine.database.models import DeliveryAttempt, Notification
from engine.database.models.inbox import InboxMessage
from engine.delivery import providers
from engine.delivery.breaker import breaker_key
from engine.delivery.jobs import deliver_notification
from engine.provisioning import apply_document
from engine.queue.embedded_redis import free_port
from engine.reports.timeline import timeline
from tests import factories
from tests.support.smtp_server import start_smtp
from tests.support.vendor_server import VendorServer

TOKEN = "server-token-123"


@pytest.fixture
def configure(settings):
    """Bind settings with other providers for one test; the test's own afterwards."""

    def bind(**changes):
        runtime.configure(settings.with_changes(**changes))
        providers.close_all()

    yield bind
    providers.close_all()
    runtime.configure(settings)


@pytest.fixture
def servers():
    started = []

    def start(port=None):
        controller, handler = start_smtp(port or free_port())
        handler.port = controller.port
        started.append(controller)
        return handler

    yield start
    for controller in started:
        controller.stop()


def _delivered(ws, **payload):
    n = factories.notification(ws, factories.email_payload(**payload))
    status = deliver_notification(str(n.id))
    (row,) = DeliveryAttempt.select().where(DeliveryAttempt.notification == n.id)
    return status, row


def _end_open_period(url: str) -> None:
    """As when the breaker's period has passed: its end moved to the past."""
    Redis.from_url(runtime.settings().redis_url).hset(breaker_key(None, url), "open_until", 1)


def test_mail_flows_through_the_second_server_and_the_first_is_skipped_while_open(
        configure, servers):
    dead_port = free_port()  # a stopped server: nothing listens there
    live = servers()
    first = f"smtp://127.0.0.1:{dead_port}?timeout=5"
    configure(email_provider=f"{first} smtp://127.0.0.1:{live.port}",
              provider_breaker_failures=2)
    ws = factories.workspace()
    live_label = f"smtp://127.0.0.1:{live.port}"
    for _ in range(2):
        status, row = _delivered(ws)
        assert status == "delivered" and row.outcome == "delivered"
        assert row.delivered_via == live_label
        assert [t["outcome"] for t in row.providers_tried] == ["transient", "delivered"]
        assert row.providers_tried[0]["provider"] == f"smtp://127.0.0.1:{dead_port}"
        assert "cannot reach SMTP server" in row.providers_tried[0]["error"]
    assert len(live.received) == 2

    # Two failures opened its breaker: back up now, it is still skipped for the period.
    revived = servers(dead_port)
    status, row = _delivered(ws)
    assert status == "delivered" and row.delivered_via == live_label
    assert row.providers_tried[0] == {"provider": f"smtp://127.0.0.1:{dead_port}",
                                      "outcome": "skipped", "error": "circuit open"}
    assert revived.received == [] and len(live.received) == 3

    # The period over, one message probes it; it answers, so it is the first choice again.
    _end_open_period(first)
    status, row = _delivered(ws)
    assert row.delivered_via == f"smtp://127.0.0.1:{dead_port}"
    assert row.providers_tried == [{"provider": f"smtp://127.0.0.1:{dead_port}",
                                    "outcome": "delivered", "error": None}]
    assert len(revived.received) == 1 and len(live.received) == 3
    assert not Redis.from_url(runtime.settings().redis_url).exists(breaker_key(None, first))


def test_the_timeline_shows_which_provider_took_it_and_what_was_tried(configure, servers):
    live = servers()
    dead = f"smtp://127.0.0.1:{free_port()}?timeout=5"
    configure(email_provider=f"{dead} smtp://127.0.0.1:{live.port}")
    ws = factories.workspace()
    _, row = _delivered(ws)
    (entry,) = [e for e in timeline(ws.id, str(row.notification_id)).entries
                if e.kind == "attempt"]
    assert entry.detail["deliveredVia"] == f"smtp://127.0.0.1:{live.port}"
    assert entry.detail["provider"] == "smtp"
    assert [t["outcome"] for t in entry.detail["providersTried"]] == ["transient", "delivered"]


def test_a_hard_bounce_does_not_fail_over(configure, servers):
    primary, secondary = servers(), servers()
    primary.refuse["gone@example.net"] = "550 5.1.1 no such mailbox"
    configure(email_provider=f"smtp://127.0.0.1:{primary.port} "
                             f"smtp://127.0.0.1:{secondary.port}")
    ws = factories.workspace()
    status, row = _delivered(ws, to=["gone@example.net"])
    assert (status, row.outcome, row.delivered_via) == ("suppressed", "suppressed", None)
    assert row.providers_tried == [{"provider": f"smtp://127.0.0.1:{primary.port}",
                                    "outcome": "suppressed", "error": row.error}]
    assert secondary.received == []
    from engine.database.models import Suppression

    assert Suppression.get(Suppression.workspace == ws).address == "gone@example.net"


def test_every_provider_failing_is_one_transient_attempt_retried_later(configure):
    ports = free_port(), free_port()
    configure(email_provider=" ".join(f"smtp://127.0.0.1:{p}?timeout=5" for p in ports))
    status, row = _delivered(factories.workspace())
    assert status == "queued" and row.outcome == "transient"
    assert [t["outcome"] for t in row.providers_tried] == ["transient", "transient"]
    assert Notification.get().next_attempt_at is not None


def _vendor(status: int, headers: dict | None = None) -> VendorServer:
    answer = {"ErrorCode": 0, "MessageID": "pm-2"} if status == 200 else {
        "ErrorCode": 0, "Message": "down for maintenance"}
    return VendorServer(lambda path, h, body: (status, headers or {}, answer))


def test_an_http_vendor_answering_503_fails_over_to_the_next(configure):
    down, up = _vendor(503, {"Retry-After": "120"}), _vendor(200)
    try:
        urls = [f"postmark://{TOKEN}@127.0.0.1:{s.port}?scheme=http" for s in (down, up)]
        configure(email_provider=" ".join(urls))
        status, row = _delivered(factories.workspace())
        assert status == "delivered" and row.provider_message_id == "pm-2"
        assert row.delivered_via == f"postmark://127.0.0.1:{up.port}"
        assert row.providers_tried[0]["outcome"] == "transient"
        assert "503" in row.providers_tried[0]["error"]
        assert len(down.requests) == 1 and len(up.requests) == 1
    finally:
        down.close()
        up.close()


def test_sms_fails_over_from_a_vendor_answering_503_to_the_next(configure):
    down = VendorServer(lambda path, h, body: (503, {}, {"code": 20500, "message": "busy"}))
    try:
        configure(sms_provider=f"twilio://AC0123:tok@127.0.0.1:{down.port}?scheme=http "
                               "inbox://")
        ws = factories.workspace()
        n = factories.notification(ws, {"channel": "sms", "from": "+15005550006",
                                        "to": ["+14155550100"], "text": "Code 1234"})
        assert deliver_notification(str(n.id)) == "delivered"
        (row,) = DeliveryAttempt.select()
        assert (row.delivered_via, row.provider) == ("inbox://", "inbox")
        assert [t["outcome"] for t in row.providers_tried] == ["transient", "delivered"]
        assert InboxMessage.get().text == "Code 1234" and len(down.requests) == 1
    finally:
        down.close()


def test_a_workspace_provider_list_from_apply_fails_over(configure, servers, settings):
    configure()
    live = servers()
    dead = f"smtp://127.0.0.1:{free_port()}?timeout=5"
    document = {"accounts": [{"name": "Failover", "plan": "pro", "monthlyLimit": 10,
                              "workspaces": [{"name": "W", "emailProvider": [
                                  {"plugin": "smtp", "url": dead},
                                  {"plugin": "smtp", "url": f"smtp://127.0.0.1:{live.port}"}]}]}]}
    apply_document(document)
    from engine.database.models import Workspace

    ws = Workspace.get(Workspace.name == "W")
    status, row = _delivered(ws)
    assert status == "delivered" and len(live.received) == 1
    assert row.delivered_via == f"smtp://127.0.0.1:{live.port}"
