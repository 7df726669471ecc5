"""Delivery callbacks through real parts: an SMTP server (aiosmtpd) that delivers or refuses,
the HTTPS receiver with a test CA, Redis and the database; the callback job run inline."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from engine import runtime
from engine.callbacks import recording, targets
from engine.callbacks.jobs import send_callbacks
from engine.callbacks.manual import replay, send_test
from engine.database import secrets
from engine.database.models import Workspace, utcnow
from engine.database.models.callbacks import Callback
from engine.delivery import providers
from engine.delivery.jobs import deliver_notification
from engine.queue.embedded_redis import free_port
from engine.webhooks.signatures import verify_webhook
from tests import factories
from tests.support.https_receiver import Scripted
from tests.support.smtp_server import start_smtp

FIELDS = ["type", "notificationId", "correlationId", "templateId", "channel", "recipient",
          "occurredAt", "detail"]


@pytest.fixture
def smtp(settings):
    controller, handler = start_smtp(free_port())
    runtime.configure(settings.with_changes(
        email_provider=f"smtp://127.0.0.1:{controller.port}?tls=none&timeout=5",
        webhook_backoff=(1.0,)))
    providers.close_all()
    yield handler
    controller.stop()
    providers.close_all()
    runtime.configure(settings)


@pytest.fixture
def called_back(receiver, ca_file, monkeypatch):
    """A workspace whose callback URL is the HTTPS receiver's /cb."""
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", ca_file)
    ws = factories.workspace()
    targets.set_target(ws, receiver.url("/cb", "localhost"))
    return ws


def _email(ws, **payload):
    n = factories.notification(ws, factories.email_payload(**payload))
    n.template = factories.template(ws)
    n.save()
    return n


def _bodies(receiver):
    return [json.loads(r.body) for r in receiver.received]


def test_delivered_email_is_called_back_signed_with_every_field(smtp, called_back, receiver):
    n = _email(called_back)
    assert deliver_notification(str(n.id)) == "delivered"
    assert send_callbacks(str(called_back.id)) == 1
    (request,) = receiver.received
    assert verify_webhook(called_back.signing_secret, request.body, request.headers)
    assert request.headers["Idempotency-Key"] == request.headers["X-Service-Delivery-Id"]
    body = json.loads(request.body)
    assert list(body) == FIELDS
    assert body["type"] == "notification.delivered"
    assert body["notificationId"] == str(n.id)
    assert body["correlationId"] == n.correlation_id
    assert body["templateId"] == str(n.template_id)
    assert (body["channel"], body["recipient"]) == ("email", "ada@example.net")
    assert body["occurredAt"].endswith("Z")
    assert body["detail"]["provider"] == "smtp"
    row = Callback.get()
    assert (row.status, row.status_code, row.attempts) == ("delivered", 200, 1)


def test_recipient_refused_with_550_is_called_back_as_bounced(smtp, called_back, receiver):
    smtp.refuse["gone@example.net"] = "550 5.1.1 no such mailbox"
    n = _email(called_back, to=["ada@example.net", "gone@example.net"])
    assert deliver_notification(str(n.id)) == "delivered"
    send_callbacks(str(called_back.id))
    by_recipient = {b["recipient"]: b["type"] for b in _bodies(receiver)}
    assert by_recipient == {"ada@example.net": "notification.delivered",
                            "gone@example.net": "notification.bounced"}


def test_only_recipient_refused_with_550_is_called_back_as_bounced(smtp, called_back,
                                                                   receiver):
    smtp.refuse["gone@example.net"] = "550 5.1.1 no such mailbox"
    n = _email(called_back, to=["gone@example.net"])
    deliver_notification(str(n.id))
    send_callbacks(str(called_back.id))
    (body,) = _bodies(receiver)
    assert (body["type"], body["recipient"]) == ("notification.bounced", "gone@example.net")
    assert "550" in body["detail"]["error"]


def test_callback_answered_500_is_retried_with_the_same_delivery_id_and_rotated_secret(
        smtp, called_back, receiver):
    receiver.script["/cb"] = [Scripted(status=500), Scripted(status=200)]
    deliver_notification(str(_email(called_back).id))
    send_callbacks(str(called_back.id))
    row = Callback.get()
    assert (row.status, row.status_code) == ("retrying", 500)
    assert row.next_attempt_at > utcnow()
    assert send_callbacks(str(called_back.id)) == 0  # not due yet
    rotated = secrets.new_signing_secret()
    Workspace.update(signing_secret=rotated).where(Workspace.id == called_back.id).execute()
    Callback.update(next_attempt_at=utcnow() - dt.timedelta(seconds=1)).execute()
    assert send_callbacks(str(called_back.id)) == 1
    first, second = receiver.received
    assert first.headers["X-Service-Delivery-Id"] == second.headers["X-Service-Delivery-Id"]
    assert first.body == second.body
    assert verify_webhook(rotated, second.body, second.headers)
    assert Callback.get().status == "delivered"


def test_a_4xx_answer_stops_the_retries_and_says_so(smtp, called_back, receiver):
    receiver.script["/cb"] = [Scripted(status=404)]
    deliver_notification(str(_email(called_back).id))
    send_callbacks(str(called_back.id))
    row = Callback.get()
    assert (row.status, row.status_code, row.next_attempt_at) == ("failed", 404, None)
    assert "retries stopped" in row.error
    receiver.script["/cb"] = [Scripted(status=200)]
    _, sent = replay(called_back, row.id)
    assert sent.status == "delivered"
    first, second = receiver.received
    assert first.headers["X-Service-Delivery-Id"] == second.headers["X-Service-Delivery-Id"]


def test_408_and_429_are_retried(smtp, called_back, receiver):
    receiver.script["/cb"] = [Scripted(status=429, headers={"Retry-After": "1"})]
    deliver_notification(str(_email(called_back).id))
    send_callbacks(str(called_back.id))
    assert Callback.get().status == "retrying"


def test_test_sends_make_no_callback(smtp, called_back, receiver):
    n = factories.notification(called_back, factories.email_payload(), is_test=True)
    assert deliver_notification(str(n.id)) == "delivered"
    assert Callback.select().count() == 0


def test_no_callback_url_makes_no_callback(smtp, receiver):
    ws = factories.workspace()
    deliver_notification(str(_email(ws).id))
    assert Callback.select().count() == 0


def test_outcomes_leave_in_the_order_they_were_recorded(smtp, called_back, receiver):
    sent = [_email(called_back, to=[f"r{i}@example.net"]) for i in range(5)]
    for n in sent:
        deliver_notification(str(n.id))
    send_callbacks(str(called_back.id))
    assert [b["notificationId"] for b in _bodies(receiver)] == [str(n.id) for n in sent]


def test_opens_and_clicks_can_be_switched_off(smtp, called_back, receiver):
    n = _email(called_back)
    assert recording.tracked(n, "open", "ada@example.net") == 1
    targets.set_tracking(called_back, False)
    assert recording.tracked(n, "click", "ada@example.net", "https://example.com/") == 0
    assert recording.tracked(n, "unsubscribe", "ada@example.net") == 1
    send_callbacks(str(called_back.id))
    assert [b["type"] for b in _bodies(receiver)] == ["notification.opened",
                                                      "notification.unsubscribed"]


def test_test_event_is_signed_and_recorded(called_back, receiver):
    callback, sent = send_test(called_back)
    assert sent.status == "delivered"
    assert Callback.get_by_id(callback.id).status_code == 200
    (request,) = receiver.received
    assert json.loads(request.body)["type"] == "callback.test"
    assert verify_webhook(called_back.signing_secret, request.body, request.headers)


def test_a_url_that_breaks_the_destination_rules_is_refused_with_the_rule(settings):
    runtime.configure(settings.with_changes(webhook_allow_private=False))
    ws = factories.workspace()
    for url, rule in (("http://example.com/cb", "https:// only"),
                      ("https://example.com:8443/cb", "port 443 only"),
                      ("https://127.0.0.1/cb", "public addresses only")):
        with pytest.raises(targets.CallbackUrlError, match=rule):
            targets.set_target(ws, url)
    assert Workspace.get_by_id(ws.id).callback_url is None


def _recorded(ws, count: int) -> None:
    n = factories.notification(ws, factories.email_payload(), status="delivered")
    for i in range(count):
        recording.record(n, [recording.Outcome("delivered", f"r{i}@example.net", utcnow(),
                                               {"provider": "smtp"})])


class _Clock:
    """jobs.time with a monotonic clock that moves ``step`` seconds at each reading."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 1000.0, step

    def monotonic(self) -> float:
        self.now += self.step
        return self.now


@pytest.mark.parametrize(("step", "renewed"), [(0.0, 0), (21.0, 1)])
def test_a_pass_renews_its_lock_once_a_third_of_its_life_has_gone(
        db, called_back, receiver, monkeypatch, step, renewed):
    # Issue 43: one round trip a callback went to renewing the lock. It is renewed when 20 s
    # have passed since it was set, so it still has 40 s when an attempt starts.
    from engine.callbacks import jobs

    _recorded(called_back, 3)
    redis = runtime.redis()
    renewals = []
    expire = redis.expire

    def renew(key, seconds):
        renewals.append((key, redis.ttl(key)))
        return expire(key, seconds)

    monkeypatch.setattr(redis, "expire", renew)
    monkeypatch.setattr(jobs, "time", _Clock(step))
    send_callbacks(str(called_back.id))
    lock, _ = jobs._keys(str(called_back.id))
    assert len(renewals) == renewed
    assert all(key == lock and 0 < ttl <= jobs.LOCK_SECONDS for key, ttl in renewals)
    # A pass that ran past PASS_SECONDS stops after the attempt; the rest wait for its job.
    assert len(receiver.received) == (3 if step == 0 else 1)
    statuses = sorted(c.status for c in Callback.select())
    assert statuses == (["delivered"] * 3 if step == 0 else ["delivered", "pending", "pending"])


def test_jobs_taken_while_a_pass_waits_make_no_pass_of_their_own(db, called_back, receiver):
    # Issue 43: each outcome recorded enqueues a job; a burst of them queued a pass each,
    # and all but the first found nothing after five round trips.
    from engine.callbacks import jobs

    _recorded(called_back, 3)
    workspace = str(called_back.id)
    handed = []  # the passes a worker's slots were given, not started yet
    answers = [jobs.hand_over(workspace, handed.append) for _ in range(3)]
    assert answers == [True, False, False] and len(handed) == 1
    assert handed[0]() == 3  # the pass that waited reads every row due when it starts
    assert len(receiver.received) == 3
    # Once its pass started, a workspace's next job hands over a pass again.
    assert jobs.hand_over(workspace, handed.append) is True
    assert handed[1]() == 0
    assert jobs._waiting == set()


def test_where_rq_runs_the_job_its_result_is_what_it_sent(db, called_back, receiver):
    # The fork-per-job worker, or a job the slots did not take: RQ runs the pass inside the
    # job, and files what it returned. There is no "handed over" answer any more.
    from rq.job import Job

    from engine.callbacks import queue

    queue._queue().empty()
    _recorded(called_back, 2)
    (job,) = queue._queue().jobs
    assert Job.fetch(job.id, connection=runtime.redis()).perform() == 2
    assert [c.status for c in Callback.select()] == ["delivered", "delivered"]


def test_outcomes_recorded_while_a_job_waits_enqueue_no_other(db, called_back, receiver):
    # Issue 43: a burst of outcomes queued an RQ job each, all but the first finding nothing.
    from engine.callbacks import queue, sweep

    jobs_queued = queue._queue()
    jobs_queued.empty()
    _recorded(called_back, 3)
    assert jobs_queued.count == 1
    (job,) = jobs_queued.jobs
    assert job.args == (str(called_back.id),)
    assert send_callbacks(str(called_back.id)) == 3  # the job runs: its mark is gone
    _recorded(called_back, 1)
    assert jobs_queued.count == 2
    # A lost job's mark stands until it expires: the sweep enqueues past it.
    Callback.update(created_at=utcnow() - dt.timedelta(minutes=5)).execute()
    assert sweep.sweep_once() == 1
    assert jobs_queued.count == 3
    assert len(receiver.received) == 3
