"""The outcome events a plugin receives (docs/plugins.md), from real deliveries."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.database.models import Notification, Suppression
from engine.delivery import providers
from engine.delivery.jobs import deliver_notification
from engine.plugins.hookspecs import hookimpl
from engine.plugins.manager import default_registry
from engine.queue.embedded_redis import free_port
from tests import factories
from tests.support.https_receiver import Scripted
from tests.support.smtp_server import start_smtp


class Listener:
    """A plugin that records every outcome event it is given."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any], Any]] = []

    @hookimpl
    def notification_delivered(self, notification, attempt) -> None:
        self.events.append(("delivered", notification, attempt))

    @hookimpl
    def notification_failed(self, notification, attempt) -> None:
        self.events.append(("failed", notification, attempt))

    @hookimpl
    def notification_suppressed(self, notification, recipients) -> None:
        self.events.append(("suppressed", notification, recipients))


@pytest.fixture
def listener():
    manager = default_registry().manager
    plugin = Listener()
    manager.register(plugin)
    yield plugin
    manager.unregister(plugin)


def _expected(n: Notification, status: str) -> dict[str, Any]:
    return {"id": str(n.id), "channel": n.channel, "workspaceId": str(n.workspace_id),
            "status": status}


def test_a_delivery_is_reported_to_the_plugin_with_its_attempt(settings, listener):
    n = factories.notification(factories.workspace(), factories.email_payload())
    assert deliver_notification(str(n.id)) == "delivered"
    ((kind, notification, attempt),) = listener.events
    assert kind == "delivered" and notification == _expected(n, "delivered")
    assert attempt["outcome"] == "delivered" and attempt["number"] == 1


def test_suppressed_recipients_are_reported_beside_the_delivery(settings, listener):
    ws = factories.workspace()
    Suppression.create(workspace=ws, address="ada@example.net")
    n = factories.notification(ws, factories.email_payload(
        to=["ada@example.net", "bob@example.net"]))
    assert deliver_notification(str(n.id)) == "delivered"
    (suppressed, delivered) = listener.events
    assert suppressed == ("suppressed", _expected(n, "delivered"), ["ada@example.net"])
    assert delivered[0] == "delivered"


def test_a_refused_message_is_reported_as_failed(settings, listener):
    controller, handler = start_smtp(free_port())
    handler.refuse["hello@example.com"] = "554 5.7.1 sender refused"
    try:
        own = json.dumps({"plugin": "smtp",
                          "url": f"smtp://127.0.0.1:{controller.port}?tls=none&timeout=5"})
        n = factories.notification(factories.workspace(email_provider=own),
                                   factories.email_payload())
        assert deliver_notification(str(n.id)) == "failed"
    finally:
        providers.close_all()
        controller.stop()
    ((kind, notification, attempt),) = listener.events
    assert kind == "failed" and notification == _expected(n, "failed")
    assert attempt["outcome"] == "permanent" and attempt["status_code"] == 554


@pytest.mark.parametrize(("status", "outcome", "events"), [
    (200, "delivered", [("delivered", "delivered")]),
    (410, "failed", [("failed", "permanent")]),
    (503, "queued", []),  # a retry is due: nothing final to report yet
])
def test_a_webhook_outcome_is_reported_as_an_email_one_is(settings, listener, receiver,
                                                          ca_file, monkeypatch, status,
                                                          outcome, events):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", ca_file)
    receiver.script["/hook"] = [Scripted(status=status)]
    n = factories.notification(factories.workspace(), {
        "channel": "webhook", "url": receiver.url("/hook", "localhost"), "body": "{}",
        "contentType": "application/json", "headers": {}})
    assert deliver_notification(str(n.id)) == outcome
    assert [(kind, attempt["outcome"]) for kind, _, attempt in listener.events] == events
    for _, notification, attempt in listener.events:
        assert notification == _expected(n, outcome)
        assert attempt["status_code"] == status
