"""The worker's webhook job: attempts recorded, retries scheduled, rotation applied at once."""

from __future__ import annotations

import datetime as dt

from engine.database import secrets
from engine.database.models import DeliveryAttempt, Notification, Workspace, utcnow
from engine.delivery.jobs import deliver_notification
from engine.webhooks.signatures import verify_webhook
from tests import factories
from tests.support.https_receiver import Scripted


def _notification(ws, receiver, path="/hook"):
    payload = {"channel": "webhook", "url": receiver.url(path, "localhost"),
               "body": '{"order": "A-1"}', "contentType": "application/json",
               "headers": {"X-Team": "core"}}
    return factories.notification(ws, payload)


def _make_due(n):
    Notification.update(next_attempt_at=utcnow() - dt.timedelta(seconds=1)).where(
        Notification.id == n.id).execute()


def test_delivered_webhook_is_signed_with_the_workspace_secret(settings, receiver, ca_file,
                                                              monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", ca_file)
    ws = factories.workspace()
    n = _notification(ws, receiver)
    assert deliver_notification(str(n.id)) == "delivered"
    (request,) = receiver.received
    assert request.headers["X-Service-Delivery-Id"] == n.delivery_id
    assert verify_webhook(ws.signing_secret, request.body, request.headers)
    (row,) = DeliveryAttempt.select()
    assert (row.outcome, row.status_code, row.number) == ("delivered", 200, 1)


def test_transient_failure_is_retried_with_the_rotated_secret(settings, receiver, ca_file,
                                                             monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", ca_file)
    receiver.script["/flaky"] = [Scripted(status=503, headers={"Retry-After": "30"}),
                                 Scripted(status=200)]
    ws = factories.workspace()
    n = _notification(ws, receiver, "/flaky")
    before = utcnow()
    assert deliver_notification(str(n.id)) == "queued"
    n = Notification.get_by_id(n.id)
    wait = (n.next_attempt_at - before).total_seconds()
    assert 29 <= wait <= 35, wait
    # Not due yet: a duplicate job does nothing.
    assert deliver_notification(str(n.id)) == "skipped"
    # Rotation applies to the pending retry at once.
    rotated = secrets.new_signing_secret()
    Workspace.update(signing_secret=rotated).where(Workspace.id == ws.id).execute()
    _make_due(n)
    assert deliver_notification(str(n.id)) == "delivered"
    first, second = receiver.received
    assert first.headers["X-Service-Delivery-Id"] == second.headers["X-Service-Delivery-Id"]
    assert verify_webhook(rotated, second.body, second.headers)
    assert not verify_webhook(ws.signing_secret, second.body, second.headers)
    outcomes = [a.outcome for a in DeliveryAttempt.select().order_by(DeliveryAttempt.number)]
    assert outcomes == ["transient", "delivered"]


def test_attempts_stop_at_the_maximum(settings, receiver, ca_file, monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", ca_file)
    from engine import runtime

    runtime.configure(settings.with_changes(webhook_max_attempts=2))
    receiver.script["/down"] = [Scripted(status=500)]
    n = _notification(factories.workspace(), receiver, "/down")
    assert deliver_notification(str(n.id)) == "queued"
    _make_due(n)
    assert deliver_notification(str(n.id)) == "failed"
    assert DeliveryAttempt.select().count() == 2


def test_permanent_failure_is_not_retried(settings, receiver, ca_file, monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", ca_file)
    receiver.script["/gone"] = [Scripted(status=410)]
    n = _notification(factories.workspace(), receiver, "/gone")
    assert deliver_notification(str(n.id)) == "failed"
    assert Notification.get_by_id(n.id).next_attempt_at is None


def test_the_job_delivers_a_webhook_as_any_channel_with_no_branch_for_it():
    """The webhook channel goes through the channel/provider contract: its provider is the
    engine's signed POST (engine/delivery/webhook_sending.py), chosen with the others."""
    from pathlib import Path

    import engine.delivery.jobs as jobs

    source = Path(jobs.__file__).read_text()
    assert not any(f'"{name}"' in source for name in ("webhook", "email", "sms"))
    assert ".delivery ==" not in source and "needs_provider" not in source
