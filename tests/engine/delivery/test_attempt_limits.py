"""However a notification's attempts end (an outcome, an exception, a crash), it is tried at
most its channel's maximum: the claim never starts an attempt past it, the reconciler ends
a row that had them all, and an exception that is not the database's fails it at once."""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from peewee import DatabaseError

from engine import runtime
from engine.database.models import DeliveryAttempt, Notification, utcnow
from engine.database.models.inbox import InboxMessage
from engine.delivery.jobs import MAX_EMAIL_ATTEMPTS, deliver_notification
from engine.queue.queueing import queue
from engine.worker.reconciler import reconcile
from tests import factories


def _aged(n: Notification, **fields) -> Notification:
    """The row as the reconciler finds it after its grace period, with ``fields`` set."""
    Notification.update(updated_at=utcnow() - dt.timedelta(minutes=5), **fields).where(
        Notification.id == n.id).execute()
    return Notification.get_by_id(n.id)


@contextmanager
def _table_gone(db, model) -> Iterator[None]:
    """The table of ``model`` missing for a while: every statement on it fails in the database."""
    name, hidden = model._meta.table_name, f"hidden_{uuid.uuid4().hex[:8]}"
    db.execute_sql(f'ALTER TABLE "{name}" RENAME TO "{hidden}"')
    try:
        yield
    finally:
        db.execute_sql(f'ALTER TABLE "{hidden}" RENAME TO "{name}"')


def test_a_stuck_row_that_had_its_last_attempt_is_failed_not_re_enqueued(settings):
    ws = factories.workspace()
    last = _aged(factories.notification(ws, factories.email_payload()), status="sending",
                 attempts=MAX_EMAIL_ATTEMPTS)
    before = _aged(factories.notification(ws, factories.email_payload()), status="sending",
                   attempts=MAX_EMAIL_ATTEMPTS - 1)
    assert reconcile() == {"retries": 0, "lost": 0, "stuck": 1, "exhausted": 1,
                           "dropped": 0}
    assert queue().get_job_ids() == [str(before.id)]
    last = Notification.get_by_id(last.id)
    assert (last.status, last.attempts) == ("failed", MAX_EMAIL_ATTEMPTS)
    assert last.last_error == "gave up after 8 attempts: attempt 8 never finished"
    assert [(a.number, a.outcome) for a in last.delivery_attempts] == [(8, "permanent")]
    assert reconcile()["exhausted"] == 0


def test_a_fan_out_that_reached_someone_before_its_last_attempt_died_ends_delivered(settings):
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload(
        emailType="Marketing", to=["ada@example.net", "bob@example.net"]))
    DeliveryAttempt.create(notification=n, number=1, recipient="ada@example.net",
                           outcome="delivered")
    _aged(n, status="sending", attempts=MAX_EMAIL_ATTEMPTS)
    assert reconcile()["exhausted"] == 1
    n = Notification.get_by_id(n.id)
    assert (n.status, n.last_error) == ("delivered", None)
    assert queue().get_job_ids() == []


def test_a_retry_past_a_lowered_maximum_is_failed(settings):
    runtime.configure(settings.with_changes(webhook_max_attempts=2))
    ws = factories.workspace()
    payload = {"channel": "webhook", "url": "https://hooks.example.com/a", "body": "{}",
               "contentType": "application/json", "headers": {}}
    n = _aged(factories.notification(ws, payload), attempts=3,
              next_attempt_at=utcnow() - dt.timedelta(seconds=1))
    try:
        assert reconcile() == {"retries": 0, "lost": 0, "stuck": 0, "exhausted": 1,
                               "dropped": 0}
    finally:
        runtime.configure(settings)
    n = Notification.get_by_id(n.id)
    assert (n.status, n.last_error) == ("failed", "gave up after 3 attempts")
    assert queue().get_job_ids() == [] and DeliveryAttempt.select().count() == 0


@pytest.mark.parametrize("attempts, outcome", [(MAX_EMAIL_ATTEMPTS, "skipped"),
                                               (MAX_EMAIL_ATTEMPTS - 1, "delivered")])
def test_a_claim_never_starts_an_attempt_past_the_maximum(settings, attempts, outcome):
    ws = factories.workspace()
    n = _aged(factories.notification(ws, factories.email_payload()), status="sending",
              attempts=attempts)
    assert deliver_notification(str(n.id)) == outcome
    assert Notification.get_by_id(n.id).attempts == min(attempts + 1, MAX_EMAIL_ATTEMPTS)
    assert InboxMessage.select().count() == (outcome == "delivered")


def test_an_exception_outside_any_message_fails_the_notification_once(settings, caplog):
    ws = factories.workspace()
    # A recipient that is not a string: planning the send raises AttributeError.
    n = factories.notification(ws, factories.email_payload(to=[42], suppressionKeys=[]))
    with caplog.at_level(logging.ERROR, logger="herald.delivery"):
        assert deliver_notification(str(n.id)) == "failed"
    assert f"delivering notification {n.id} failed: AttributeError" in caplog.text
    _aged(n)
    assert not any(reconcile().values())
    n = Notification.get_by_id(n.id)
    assert (n.status, n.attempts) == ("failed", 1)
    (row,) = n.delivery_attempts
    assert (row.recipient, row.outcome) == (None, "permanent")
    assert row.error == n.last_error
    assert row.error.startswith("AttributeError: 'int' object has no attribute")


def test_a_database_error_in_one_message_s_send_is_retried_not_failed(settings, db):
    """The dev inbox stores through the database: its error is no permanent failure."""
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload())
    with _table_gone(db, InboxMessage):
        assert deliver_notification(str(n.id)) == "queued"
    (row,) = DeliveryAttempt.select()
    assert row.outcome == "transient" and row.error.split(":")[0] in (
        "OperationalError", "ProgrammingError")
    _aged(n, next_attempt_at=utcnow())
    assert deliver_notification(str(n.id)) == "delivered"
    assert InboxMessage.select().count() == 1


def test_a_database_error_outside_the_messages_leaves_the_row_to_the_reconciler(settings, db):
    """As a crash: the row stays `sending`, and its next attempt is the reconciler's to start."""
    ws = factories.workspace()
    n = factories.notification(ws, factories.email_payload(
        emailType="Marketing", to=["ada@example.net"]))
    _aged(n, attempts=1, next_attempt_at=utcnow())  # a retry: its plan reads the attempts
    with _table_gone(db, DeliveryAttempt), pytest.raises(DatabaseError):
        deliver_notification(str(n.id))
    n = _aged(n)
    assert (n.status, n.attempts) == ("sending", 2)
    assert reconcile()["stuck"] == 1
    assert deliver_notification(str(n.id)) == "delivered"
