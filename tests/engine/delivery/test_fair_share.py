"""A fan-out yields the worker's delivery thread to a delivery waiting for it: the messages
in flight recorded, the row queued again as the same attempt, its job at the back of the
bulk queue; the next slice sends only to the recipients left (docs/delivery.md, "Queues
and fairness"). The delivery thread, the SMTP server and the database are real."""

from __future__ import annotations

import threading
import time

import pytest
from redis import Redis

from engine import runtime
from engine.database.models import DeliveryAttempt, Notification
from engine.delivery import providers
from engine.delivery.jobs import deliver_notification
from engine.queue.embedded_redis import free_port
from engine.queue.queueing import BULK_QUEUE_NAME, QUEUE_NAME
from engine.worker import handoff
from tests import factories
from tests.support.smtp_server import start_smtp

RECIPIENTS = [f"reader{i}@example.net" for i in range(150)]


@pytest.fixture
def smtp(settings):
    controller, handler = start_smtp(free_port())
    handler.delay = 0.01  # 150 messages over 3 lanes: about half a second at the least
    runtime.configure(settings.with_changes(
        email_provider=f"smtp://127.0.0.1:{controller.port}?tls=none&connections=3"))
    providers.close_all()
    yield handler
    providers.close_all()
    runtime.configure(settings)
    controller.stop()


def _until(predicate, what: str) -> None:
    deadline = time.monotonic() + 30
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def test_a_fan_out_yields_to_a_waiting_delivery_and_resumes_as_the_same_attempt(
        settings, smtp):
    news = factories.notification(factories.workspace(), factories.email_payload(
        emailType="Marketing", to=RECIPIENTS))
    reset = factories.notification(factories.workspace(), factories.email_payload(
        to=["ada@example.org"], subject="reset"))
    handoff.start()
    try:
        handoff.hand_delivery(str(news.id))  # as RQ's dequeue does
        assert handoff.taken(str(news.id))
        _until(lambda: len(smtp.received) >= 3, "the fan-out to be under way")
        handoff.hand_delivery(str(reset.id))  # waits for the thread: the fan-out yields to it
        assert handoff.taken(str(reset.id))  # returns once the fan-out's slice ended
        _until(lambda: Notification.get_by_id(reset.id).status == "delivered", "the reset")
    finally:
        handoff.close()
    arrived = [m.rcpt_tos[0] for m in smtp.received]
    assert "ada@example.org" in arrived
    sent = [a for a in arrived if a != "ada@example.org"]
    assert 0 < len(sent) < len(RECIPIENTS), "the fan-out did not yield"
    paused = Notification.get_by_id(news.id)
    assert (paused.status, paused.attempts, paused.next_attempt_at) == ("queued", 0, None)
    recorded = DeliveryAttempt.select().where(DeliveryAttempt.notification == news.id)
    assert sorted(r.recipient for r in recorded) == sorted(sent), "in flight, unrecorded"
    redis = Redis.from_url(settings.redis_url)
    assert redis.lrange(f"rq:queue:{BULK_QUEUE_NAME}", 0, -1) == [str(news.id).encode()]
    assert redis.lrange(f"rq:queue:{QUEUE_NAME}", 0, -1) == []

    assert deliver_notification(str(news.id)) == "delivered"  # the next slice, to the end
    arrived = [m.rcpt_tos[0] for m in smtp.received if m.rcpt_tos != ["ada@example.org"]]
    assert sorted(arrived) == sorted(RECIPIENTS), "a recipient missed or reached twice"
    done = Notification.get_by_id(news.id)
    assert (done.status, done.attempts) == ("delivered", 1)
    assert recorded.count() == len(RECIPIENTS)


def test_without_a_delivery_waiting_a_fan_out_runs_to_its_end(settings, smtp):
    news = factories.notification(factories.workspace(), factories.email_payload(
        emailType="Marketing", to=RECIPIENTS))
    handoff.start()
    try:
        handoff.hand_delivery(str(news.id))
        assert handoff.taken(str(news.id))
    finally:
        handoff.close()  # waits for the delivery in hand
    assert Notification.get_by_id(news.id).status == "delivered"
    assert sorted(m.rcpt_tos[0] for m in smtp.received) == sorted(RECIPIENTS)


def test_a_fan_outs_checkpoints_renew_its_claim(settings, smtp):
    """A fan-out longer than the reconciler's grace is under way, not stuck: each checkpoint
    moves the row's updated_at, so no other worker claims it meanwhile."""
    news = factories.notification(factories.workspace(), factories.email_payload(
        emailType="Marketing", to=RECIPIENTS))
    running = threading.Thread(target=deliver_notification, args=(str(news.id),))
    running.start()
    try:
        _until(lambda: Notification.get_by_id(news.id).status == "sending", "the claim")
        claimed = Notification.get_by_id(news.id).updated_at
        recorded = DeliveryAttempt.select().where(DeliveryAttempt.notification == news.id)
        _until(lambda: recorded.count() >= 1, "a checkpoint")
        row = Notification.get_by_id(news.id)
        assert row.status == "sending", "over before a checkpoint was seen"
        assert row.updated_at > claimed
    finally:
        running.join(30)
    assert Notification.get_by_id(news.id).status == "delivered"


def test_a_fan_out_whose_last_slice_met_only_suppressed_recipients_still_failed(settings, smtp):
    """An earlier slice failed a recipient for good; the slice left finds its one recipient
    suppressed since: the notification failed (with that error), it was not 'suppressed'."""
    from engine.catalog import suppressions
    from engine.database import notification_store
    from engine.database.vocabulary import Outcome
    from engine.delivery.outcomes import message_row
    from engine.plugins.contracts import PermanentError

    ws = factories.workspace()
    news = factories.notification(ws, factories.email_payload(
        emailType="Marketing", to=["first@example.net", "second@example.net"]))
    notification_store.record_attempts([message_row(
        news, "first@example.net", Outcome.PERMANENT, 0,
        PermanentError("550 no such mailbox"))])
    suppressions.add(ws.id, ["second@example.net"], "bounce")

    assert deliver_notification(str(news.id)) == "failed"
    done = Notification.get_by_id(news.id)
    assert (done.status, done.last_error) == ("failed", "550 no such mailbox")
    assert smtp.received == []
