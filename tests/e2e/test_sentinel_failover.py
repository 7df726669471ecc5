"""A Sentinel failover in the middle of a burst of sends, with real processes: a primary, a
replica and three sentinels on loopback, `herald serve` (two gunicorn workers) and
`herald worker` reaching Redis through ``redis+sentinel://``. The primary is killed; the
sentinels promote the replica; nothing accepted is lost or sent twice."""

from __future__ import annotations

import os
import time

import pytest
import requests

from engine.database.models import Notification
from engine.queue.embedded_redis import free_port
from tests import factories
from tests.conftest import TEST_SECRET_KEY
from tests.e2e.test_operations import _answers, _start, _stop
from tests.support.processes import wait_for
from tests.support.sentinel_group import start_group
from tests.support.smtp_server import start_smtp

pytestmark = pytest.mark.slow


@pytest.fixture
def group():
    group = start_group(replicas=1)
    yield group
    group.stop()


def _subject(message) -> str:
    return message.content.split(b"Subject: ")[1].split(b"\r\n")[0].decode()


def test_a_failover_mid_burst_loses_and_doubles_no_accepted_send(settings, group, tmp_path):
    controller, handler = start_smtp(free_port())
    handler.delay = 0.02  # a backlog builds: jobs sit in Redis when the primary dies
    api_port = free_port()
    env = {**os.environ, "HERALD_ENV": "test", "HERALD_DATABASE_URL": settings.database_url,
           "HERALD_REDIS_URL": group.url, "HERALD_SECRET_KEY": TEST_SECRET_KEY,
           "HERALD_EMAIL_PROVIDER": f"smtp://127.0.0.1:{controller.port}?tls=none",
           "HERALD_RECONCILE_AFTER_SECONDS": "2", "HOME": str(tmp_path)}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    logs = {"api": tmp_path / "api.log", "worker": tmp_path / "worker.log"}
    api = _start(["serve", "--host", "127.0.0.1", "--port", str(api_port), "--workers", "2"],
                 env, logs["api"])
    worker = _start(["worker"], env, logs["worker"])
    base = f"http://127.0.0.1:{api_port}"

    def explain() -> str:
        """The worker's log without its routine lines, the API's tail, the sentinels'."""
        worker_lines = [line for line in logs["worker"].read_text().splitlines()
                        if "delivered correlationId" not in line and "rq.worker" not in line]
        return "\n".join(worker_lines[-60:]) + logs["api"].read_text()[-3000:] + group.log()

    try:
        wait_for(lambda: _answers(f"{base}/readyz"), 60, "the API", logs["api"].read_text)
        ws = factories.workspace()
        tpl = factories.template(ws, defaults={"to": ["team@example.com"]})
        key = factories.api_key(ws)
        answers: list[tuple[str, requests.Response]] = []

        def send(n: int) -> requests.Response:
            body = {"tenantId": str(ws.id), "templateId": str(tpl.id),
                    "tags": [{"key": "name", "value": f"s{n}"}]}
            answer = requests.post(f"{base}/api/v1/notifications/send", json=body,
                                   headers={"X-Api-Key": key, "X-Correlation-Id": f"failover-{n}"},
                                   timeout=30)
            answers.append((f"Hi s{n}", answer))
            return answer

        for n in range(40):
            assert send(n).status_code == 202
        old = group.primary_port()
        group.shut_down(old)
        during = 0  # sends while the sentinels had not promoted anyone yet
        after = 0  # sends accepted once the replica was promoted
        n = 40
        deadline = time.monotonic() + 60
        while after < 10 and time.monotonic() < deadline:
            promoted = group.primary_port() not in (None, old)
            answer = send(n)
            n += 1
            if not promoted:
                during += 1
            elif answer.status_code == 202:
                after += 1
        assert after == 10, f"no send accepted after the failover. {explain()}"
        assert during > 0, "the failover ended before a send could land in it"

        statuses = [answer.status_code for _, answer in answers]
        assert set(statuses) <= {202, 503}, statuses
        for _, answer in answers:
            if answer.status_code == 503:
                assert answer.headers["Retry-After"]
                assert answer.json()["errorCode"] == "service.unavailable"
        accepted = {subject for subject, answer in answers if answer.status_code == 202}
        ids = [answer.json()["correlationId"] for _, answer in answers
               if answer.status_code == 202]

        def all_delivered() -> bool:
            return Notification.select().where(Notification.correlation_id.in_(ids),
                                               Notification.status == "delivered").count() \
                == len(ids)

        wait_for(all_delivered, 60, "every accepted send delivered", explain)
        wait_for(lambda: len(handler.received) >= len(accepted), 10, "the sink to have them")
        subjects = [_subject(message) for message in handler.received]
        assert set(subjects) == accepted  # a 503 stored nothing that was sent later
        assert len(subjects) == len(set(subjects)), "a send was delivered twice"
        assert worker.poll() is None, "the worker died in the failover"
        assert api.poll() is None
        assert "Traceback" not in logs["api"].read_text()
    finally:
        _stop(api)
        _stop(worker)
        controller.stop(no_assert=True)
