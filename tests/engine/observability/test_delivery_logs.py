"""Each delivery attempt's line: the ids, the outcome and the reason; a failure is never
logged as a success; the metrics count it (a real SMTP sink, stopped for the failure)."""

from __future__ import annotations

import datetime as dt
import json
import logging

import pytest

from engine.database.models import Notification, utcnow
from engine.delivery.jobs import deliver_notification
from engine.delivery.providers import close_all
from engine.observability.log_format import JsonFormatter, TextFormatter
from engine.observability.metrics_registry import exposition
from engine.queue.embedded_redis import free_port
from engine.worker.process_log import configure_logging
from engine.worker.reconciler import reconcile
from tests import factories
from tests.support.smtp_server import start_smtp


@pytest.fixture
def smtp_settings(settings):
    """The engine bound to an SMTP provider on a port of the test's own."""
    from engine import runtime

    port = free_port()
    bound = settings.with_changes(email_provider=f"smtp://127.0.0.1:{port}?tls=none&timeout=2")
    runtime.configure(bound)
    close_all()
    yield port
    close_all()


def _delivery_records(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "herald.delivery"
            and r.getMessage().startswith("delivery attempt")]


def test_a_delivered_and_a_failed_attempt_each_say_so_with_their_ids(smtp_settings, caplog):
    caplog.set_level(logging.INFO)
    ws = factories.workspace()
    controller, handler = start_smtp(smtp_settings)
    try:
        sent = factories.notification(ws, factories.email_payload())
        assert deliver_notification(str(sent.id)) == "delivered"
        assert len(handler.received) == 1
    finally:
        controller.stop()
    close_all()  # the kept connection would fail first; a fresh one is refused
    lost = factories.notification(ws, factories.email_payload())
    assert deliver_notification(str(lost.id)) == "queued"
    first, second = _delivery_records(caplog)
    assert first.outcome == "delivered" and first.levelno == logging.INFO
    assert first.notificationId == str(sent.id) and first.correlationId == sent.correlation_id
    assert first.provider == "smtp" and first.channel == "email"
    assert second.outcome == "retry" and second.levelno == logging.WARNING
    assert second.notificationId == str(lost.id) and second.retryAt.endswith("Z")
    assert second.reason and "next attempt at" in second.getMessage()
    text = TextFormatter().format(second)
    assert f"notificationId={lost.id}" in text and "outcome=retry" in text
    document = json.loads(JsonFormatter().format(second))
    assert document["correlationId"] == lost.correlation_id
    assert document["outcome"] == "retry" and document["level"] == "WARNING"
    scraped = exposition()[0].decode()
    assert 'herald_deliveries_total{channel="email",outcome="delivered",provider="smtp"}' \
        in scraped
    assert 'herald_retries_total{channel="email"}' in scraped
    assert 'herald_send_seconds_count{channel="email",provider="smtp"}' in scraped


def test_rq_never_calls_a_delivery_job_successful():
    configure_logging()
    rq_log = logging.getLogger("rq.worker")
    kept = [f.filter(logging.LogRecord("rq.worker", logging.INFO, "", 0, msg, args, None))
            for f in rq_log.filters
            for msg, args in (("Successfully completed job %s in %ss on worker %s",
                               ("j", 1, "w")), ("Worker %s: %s: %s (%s)", ("w", "herald",
                                                                          "Job OK", "j")),
                              ("Worker %s: started", ("w",)))]
    assert kept == [False, False, True]


def test_the_reconciler_names_each_notification_it_re_enqueues(settings, caplog):
    caplog.set_level(logging.INFO)
    lost = factories.notification(factories.workspace(), factories.email_payload())
    Notification.update(updated_at=utcnow() - dt.timedelta(minutes=5)).where(
        Notification.id == lost.id).execute()
    assert reconcile()["lost"] == 1
    (line,) = [r for r in caplog.records if r.name == "herald.reconciler"
               and r.getMessage().startswith("re-enqueued notification")]
    assert line.notificationId == str(lost.id) and line.correlationId == lost.correlation_id
    assert line.reason == "lost" and "its job is gone" in line.getMessage()
