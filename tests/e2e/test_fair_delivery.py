"""A real worker and a real SMTP server: another workspace's transactional mail accepted
during a large Marketing fan-out is delivered before the fan-out finishes, and the fan-out,
sent in slices between other deliveries, still reaches each recipient exactly once in one
attempt (issue #30, finding 4; docs/delivery.md, "Queues and fairness")."""

from __future__ import annotations

import base64
import os

import pytest

from engine.database.models import DeliveryAttempt, Notification
from engine.delivery.queue import enqueue_notification
from engine.queue.embedded_redis import free_port
from tests import factories
from tests.e2e.test_worker_durability import _delivered, _stop, _wait, _worker
from tests.support.smtp_server import start_smtp

FAN_OUT = 400


@pytest.fixture
def smtp_server():
    controller, handler = start_smtp(free_port())
    yield controller.port, handler
    controller.stop()


@pytest.mark.slow
def test_a_password_reset_overtakes_another_workspaces_fan_out(settings, smtp_server):
    port, handler = smtp_server
    handler.delay = 0.02  # 400 messages over 4 lanes: seconds of sending
    recipients = [f"reader{i}@example.net" for i in range(FAN_OUT)]
    attachment = base64.b64encode(os.urandom(64 * 1024)).decode("ascii")
    news = factories.notification(factories.workspace(), factories.email_payload(
        emailType="Marketing", to=recipients, subject="news",
        attachments=[{"name": "news.pdf", "contentType": "application/pdf",
                      "content": attachment, "cid": None}]))
    enqueue_notification(str(news.id), bulk=True, workspace=news.workspace_id)
    worker = _worker(settings, port)
    try:
        _wait(lambda: len(handler.received) >= 20, 60, "the fan-out to be under way")
        reset = factories.notification(factories.workspace(), factories.email_payload(
            to=["ada@example.org"], subject="reset"))
        enqueue_notification(str(reset.id), workspace=reset.workspace_id)
        _wait(lambda: _delivered([str(reset.id)]) == 1, 60, "the password reset")
        _wait(lambda: _delivered([str(news.id)]) == 1, 120, "the fan-out to finish")
    finally:
        _stop(worker)
    arrived = [m.rcpt_tos[0] for m in handler.received]
    before_reset = arrived.index("ada@example.org")
    assert before_reset < FAN_OUT, "the reset waited for the whole fan-out"
    fan_out = [a for a in arrived if a != "ada@example.org"]
    assert sorted(fan_out) == sorted(recipients), "a recipient missed or reached twice"
    rows = DeliveryAttempt.select().where(DeliveryAttempt.notification == news.id)
    assert sorted(r.recipient for r in rows) == sorted(recipients)
    assert Notification.get_by_id(news.id).attempts == 1, "its slices are one attempt"
    assert all(b"news.pdf" in m.content for m in handler.received if m.rcpt_tos != [
        "ada@example.org"])
