"""`herald notifications show` and `herald queue` against a real database, Redis, SMTP port
and RQ worker registry (issue #28, point 5)."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys

from redis import Redis
from rq import Worker
from rq.job import Job

from engine.database.models import Notification, TrackingEvent, utcnow
from engine.delivery.jobs import deliver_notification
from engine.delivery.queue import JOB_FUNCTION, enqueue_notification
from engine.queue.embedded_redis import free_port
from engine.queue.queueing import BULK_QUEUE_NAME, QUEUE_NAME, queue
from engine.reports.events import Reported, record
from tests import factories
from tests.cli.test_cli import herald  # noqa: F401 -- the fixture


def failing_workspace():
    """A workspace whose own provider is an SMTP port nobody listens on: a transient
    failure, as an SMTP sink that is down."""
    url = f"smtp://127.0.0.1:{free_port()}?timeout=2"
    return factories.workspace(email_provider=json.dumps({"plugin": "smtp", "url": url}))


def test_show_prints_the_notification_its_attempts_and_events(herald):  # noqa: F811
    ws = failing_workspace()
    n = factories.notification(ws, factories.email_payload())
    assert deliver_notification(str(n.id)) == "queued"  # refused: retried later
    record(Notification.get_by_id(n.id), Reported(kind="soft_bounced",
                                                  recipient="ada@example.net", source="dsn",
                                                  detail="4.2.2 mailbox full"))
    TrackingEvent.create(notification=n, kind="open", recipient="ada@example.net")

    by_id = herald("notifications", "show", str(n.id))
    by_correlation = herald("notifications", "show", n.correlation_id)
    assert by_id == by_correlation
    assert {k: by_id[k] for k in ("id", "correlationId", "workspaceId", "templateId",
                                  "version", "channel", "status")} == {
        "id": str(n.id), "correlationId": n.correlation_id, "workspaceId": str(ws.id),
        "templateId": None, "version": 1, "channel": "email", "status": "queued"}
    assert by_id["createdAt"].endswith("Z") and by_id["nextAttemptAt"].endswith("Z")
    (attempt,) = by_id["attempts"]
    assert attempt["provider"] == "smtp" and attempt["outcome"] == "transient"
    assert attempt["error"] and attempt["at"].endswith("Z")
    assert isinstance(attempt["durationMs"], int) and "statusCode" in attempt
    assert [(e["kind"], e["source"]) for e in by_id["events"]] == [("soft_bounced", "dsn"),
                                                                    ("opened", "tracking")]
    assert by_id["events"][0]["detail"] == "4.2.2 mailbox full"


def test_a_reused_correlation_id_shows_the_newest_and_names_the_others(herald):  # noqa: F811
    ws = factories.workspace()
    old = factories.notification(ws, factories.email_payload(),
                                 created_at=utcnow() - dt.timedelta(minutes=5))
    new = factories.notification(factories.workspace(), factories.email_payload())
    Notification.update(correlation_id="order-42").where(
        Notification.id.in_([old.id, new.id])).execute()
    out = herald("notifications", "show", "order-42")
    assert out["id"] == str(new.id) and out["sameCorrelationId"] == [str(old.id)]


def test_an_unknown_id_is_one_line(herald):  # noqa: F811
    proc = herald("notifications", "show", "nothing-like-it", ok=False)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == ("herald: no notification with id or correlation id "
                           "'nothing-like-it'\n")


def test_queue_reports_depth_retries_age_workers_and_failures(herald, settings):  # noqa: F811
    ws = factories.workspace()
    now = utcnow()
    for _ in range(2):
        enqueue_notification(str(factories.notification(ws, factories.email_payload()).id),
                             workspace=ws.id)
    factories.notification(ws, factories.email_payload(), next_attempt_at=now - dt.timedelta(
        seconds=5))  # a due retry
    factories.notification(ws, factories.email_payload(), next_attempt_at=now + dt.timedelta(
        minutes=5))  # a waiting one
    factories.notification(ws, factories.email_payload(), status="failed", updated_at=now)
    factories.notification(ws, factories.email_payload(), status="failed",
                           updated_at=now - dt.timedelta(hours=2))
    redis = Redis.from_url(settings.redis_url)
    crashed = Job.create(JOB_FUNCTION, args=("x",), id="crashed-job", connection=redis,
                         origin=QUEUE_NAME)
    crashed.save()
    queue().failed_job_registry.add(crashed, ttl=3600, exc_string="Traceback ...")
    worker = Worker([QUEUE_NAME], connection=redis, name="opsb-test-worker")
    worker.register_birth()
    worker.heartbeat()
    try:
        out = herald("queue")
    finally:
        worker.register_death()
    assert out["depth"] == 2
    assert [(q["name"], q["depth"]) for q in out["queues"]] == [(QUEUE_NAME, 2),
                                                                 (BULK_QUEUE_NAME, 0)]
    assert 0 <= out["oldestQueuedSeconds"] < 60
    assert (out["dueRetries"], out["waitingRetries"]) == (1, 1)
    assert out["failedLastHour"] == {"notifications": 1, "jobs": 1}
    (seen,) = out["workers"]
    assert seen["name"] == "opsb-test-worker" and seen["secondsSinceHeartbeat"] < 60
    assert herald("queue")["workers"] == []  # gone once it says so


def test_queue_without_redis_is_one_line(herald, tmp_path):  # noqa: F811
    env = {**herald.env, "HERALD_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"}
    proc = subprocess.run([sys.executable, "-m", "cli", "queue"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (1, ""), proc.stderr
    assert proc.stderr.startswith("herald: cannot reach Redis: "), proc.stderr
    assert proc.stderr.count("\n") == 1


def test_show_lists_the_providers_each_attempt_tried(herald):  # noqa: F811
    """Issue 37, finding 4: the trace left out ``providersTried``, so a failover did not
    show (docs/delivery.md says the trace reads them)."""
    from tests.support.smtp_server import start_smtp

    controller, _smtp = start_smtp(free_port())
    try:
        dead = f"smtp://u:hunter2@127.0.0.1:{free_port()}?timeout=2"
        live = f"smtp://127.0.0.1:{controller.port}"
        ws = factories.workspace(email_provider=json.dumps(
            [{"plugin": "smtp", "url": dead}, {"plugin": "smtp", "url": live}]))
        n = factories.notification(ws, factories.email_payload())
        assert deliver_notification(str(n.id)) == "delivered"
        (attempt,) = herald("notifications", "show", str(n.id))["attempts"]
        tried = attempt["providersTried"]
        assert [(t["provider"], t["outcome"]) for t in tried] == [
            (dead.replace("u:hunter2@", "").split("?")[0], "transient"),
            (live, "delivered")]
        assert "hunter2" not in json.dumps(attempt)
        assert attempt["deliveredVia"] == live
    finally:
        controller.stop()
