"""Two queues (docs/delivery.md, "Queues and fairness"): Marketing email on the bulk queue,
everything else on the priority queue that workers serve first; the reconciler puts a job
back on the queue it belongs to; a fan-out told to stop sends nothing more but reports what
it had in flight."""

from __future__ import annotations

import datetime as dt
import json
import threading

from redis import Redis

from channels.email import EmailChannel
from cli.app import create_app
from engine import runtime
from engine.catalog import keycache
from engine.database.models import Notification, utcnow
from engine.database.models.inbox import InboxMessage
from engine.delivery.message_lanes import send_all
from engine.delivery.queue import enqueue_notification
from engine.plugins.contracts import SendResult
from engine.queue.queueing import BULK_QUEUE_NAME, QUEUE_NAME, QUEUE_NAMES
from engine.worker.reconciler import reconcile
from engine.worker.worker_class import HeraldWorker
from tests import factories
from tests.engine.delivery.test_fan_out_lanes import planned


def _listed(settings, name: str) -> list[str]:
    redis = Redis.from_url(settings.redis_url)
    return [v.decode() for v in redis.lrange(f"rq:queue:{name}", 0, -1)]


def test_a_marketing_send_is_queued_on_the_bulk_queue(settings):
    keycache.clear()
    client = create_app(settings).test_client()
    ws = factories.workspace()
    key = factories.api_key(ws)
    sent = {}
    for kind in ("Marketing", "Transactional"):
        tpl = factories.template(ws, content={"emailType": kind},
                                 defaults={"to": ["a@example.com", "b@example.com"]})
        body = {"tenantId": str(ws.id), "templateId": str(tpl.id), "tags": []}
        answer = client.post("/api/v1/notifications/send", data=json.dumps(body),
                             content_type="application/json", headers={"X-Api-Key": key})
        assert answer.status_code == 202, answer.json
        sent[kind] = str(Notification.select().where(Notification.template == tpl.id).get().id)
    assert _listed(settings, BULK_QUEUE_NAME) == [sent["Marketing"]]
    assert _listed(settings, QUEUE_NAME) == [sent["Transactional"]]


def test_workers_serve_the_priority_queue_first(settings, monkeypatch):
    monkeypatch.setenv("HERALD_EMAIL_PROVIDER", "inbox://")
    ws = factories.workspace()
    bulk = [factories.notification(ws, factories.email_payload(
        emailType="Marketing", subject=f"news {i}")) for i in range(3)]
    for n in bulk:
        enqueue_notification(str(n.id), bulk=True, workspace=ws.id)
    reset = factories.notification(ws, factories.email_payload(subject="reset"))
    enqueue_notification(str(reset.id), workspace=ws.id)  # enqueued last, delivered first
    HeraldWorker(list(QUEUE_NAMES), connection=runtime.redis()).work(burst=True)
    subjects = [m.subject for m in InboxMessage.select().order_by(InboxMessage.created_at,
                                                                   InboxMessage.id)]
    assert subjects[0] == "reset" and sorted(subjects[1:]) == ["news 0", "news 1", "news 2"]


def test_the_reconciler_puts_a_lost_job_back_on_its_own_queue(settings):
    ws = factories.workspace()
    news = factories.notification(ws, factories.email_payload(emailType="Marketing"))
    reset = factories.notification(ws, factories.email_payload())
    sms = factories.notification(ws, {"channel": "sms", "to": ["+15550100"], "text": "hi"},
                                 channel="sms")
    Notification.update(updated_at=utcnow() - dt.timedelta(minutes=5)).execute()
    assert reconcile()["lost"] == 3
    assert _listed(settings, BULK_QUEUE_NAME) == [str(news.id)]
    assert sorted(_listed(settings, QUEUE_NAME)) == sorted([str(reset.id), str(sms.id)])
    assert reconcile()["lost"] == 0, "jobs in either queue are left alone"


class HoldingProvider:
    """Answers the first three messages at once, then holds each until released."""

    def __init__(self) -> None:
        self.max_concurrency = 3
        self.taken: list[str] = []
        self.lock = threading.Lock()
        self.release = threading.Event()

    def send(self, message):
        with self.lock:
            self.taken.append(message.to[0])
            held = len(self.taken) > 3
        if held:
            assert self.release.wait(10)
        return SendResult(provider_message_id=f"<{message.to[0]}>")


def test_a_stopped_send_reports_what_was_in_flight_and_nothing_untaken():
    provider = HoldingProvider()
    stop = threading.Event()
    outcomes = send_all(EmailChannel(), provider, planned(50), stop)
    first = next(outcomes)
    stop.set()  # no message is taken from here on; the three lanes hold one each at most
    provider.release.set()
    reported = [first, *outcomes]
    assert all(err is None for _, _, _, err in reported)
    assert sorted(r for r, *_ in reported) == sorted(provider.taken)
    assert 1 <= len(provider.taken) <= 6
