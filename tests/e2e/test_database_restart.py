"""PostgreSQL restarted under a burst of sends, with real processes: a cluster of the
test's own, `herald serve` (two gunicorn workers) and `herald worker`. The API answers
only 202 or 503 meanwhile, the worker waits it out, and each accepted send is delivered
(once, but for the messages in flight when the server went down)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import psycopg2
import pytest
import requests

from engine import runtime
from engine.database.models import Notification
from engine.queue.embedded_redis import free_port
from tests import factories
from tests.conftest import TEST_SECRET_KEY
from tests.e2e.test_operations import _answers, _start, _stop
from tests.support.private_postgres import start_postgres
from tests.support.processes import wait_for
from tests.support.smtp_server import start_smtp

pytestmark = pytest.mark.slow

IN_FLIGHT = 4  # the worker's --concurrency: what a restart may leave sent, unrecorded


@pytest.fixture
def cluster():
    cluster = start_postgres()
    if cluster is None:
        pytest.skip("no PostgreSQL server installed (initdb, pg_ctl) to run a private cluster")
    yield cluster
    cluster.remove()


def _subject(message) -> str:
    return message.content.split(b"Subject: ")[1].split(b"\r\n")[0].decode()


def test_a_database_restart_mid_burst_loses_no_accepted_send(settings, cluster,
                                                                          tmp_path):
    admin = psycopg2.connect(cluster.url())
    admin.autocommit = True
    admin.cursor().execute("CREATE DATABASE herald")
    admin.close()
    database_url = cluster.url("herald")
    controller, handler = start_smtp(free_port())
    handler.delay = 0.02
    api_port = free_port()
    env = {**os.environ, "HERALD_ENV": "test", "HERALD_DATABASE_URL": database_url,
           "HERALD_REDIS_URL": settings.redis_url, "HERALD_SECRET_KEY": TEST_SECRET_KEY,
           "HERALD_EMAIL_PROVIDER": f"smtp://127.0.0.1:{controller.port}?tls=none",
           "HERALD_RECONCILE_AFTER_SECONDS": "2", "HOME": str(tmp_path)}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    subprocess.run([sys.executable, "-m", "cli", "db", "upgrade"], env=env, check=True,
                   capture_output=True, timeout=120)
    runtime.configure(settings.with_changes(database_url=database_url))
    logs = {"api": tmp_path / "api.log", "worker": tmp_path / "worker.log"}
    api = _start(["serve", "--host", "127.0.0.1", "--port", str(api_port), "--workers", "2"],
                 env, logs["api"])
    worker = _start(["worker", "--concurrency", str(IN_FLIGHT)], env, logs["worker"])
    base = f"http://127.0.0.1:{api_port}"

    def explain() -> str:
        worker_lines = [line for line in logs["worker"].read_text().splitlines()
                        if "delivered correlationId" not in line and "rq.worker" not in line]
        return ("\n".join(worker_lines[-40:]) + logs["api"].read_text()[-3000:]
                + cluster.log())

    stop = threading.Event()
    answers: list[tuple[float, str, requests.Response]] = []
    try:
        wait_for(lambda: _answers(f"{base}/readyz"), 60, "the API", logs["api"].read_text)
        ws = factories.workspace()
        tpl = factories.template(ws, defaults={"to": ["team@example.com"]})
        key = factories.api_key(ws)

        def burst() -> None:
            n = 0
            deadline = time.monotonic() + 90  # bounded whatever the test's thread does
            while not stop.is_set() and time.monotonic() < deadline:
                body = {"tenantId": str(ws.id), "templateId": str(tpl.id),
                        "tags": [{"key": "name", "value": f"s{n}"}]}
                answer = requests.post(f"{base}/api/v1/notifications/send", json=body,
                                       headers={"X-Api-Key": key,
                                                "X-Correlation-Id": f"restart-{n}"},
                                       timeout=30)
                answers.append((time.monotonic(), f"Hi s{n}", answer))
                n += 1

        sender = threading.Thread(target=burst, daemon=True)
        sender.start()
        wait_for(lambda: sum(a.status_code == 202 for _, _, a in answers) >= 20, 60,
                 "sends accepted before the restart", explain)
        cluster.stop()
        down = time.monotonic()
        wait_for(lambda: any(at > down for at, _, _ in answers[-3:]), 30,
                 "sends answered while the database is down", explain)
        cluster.start()
        up = time.monotonic()
        # This test's own connection died with the server: read through a fresh one.
        runtime.configure(settings.with_changes(database_url=database_url))
        wait_for(lambda: sum(a.status_code == 202 for at, _, a in answers if at > up) >= 10,
                 60, "sends accepted after the restart", explain)
        stop.set()
        sender.join(timeout=40)

        statuses = [answer.status_code for _, _, answer in answers]
        assert set(statuses) <= {202, 503}, statuses
        for _, _, answer in answers:
            if answer.status_code == 503:
                assert answer.headers["Retry-After"]
                assert answer.json()["errorCode"] == "service.unavailable"
        assert 503 in statuses, "no send landed while the database was down"
        accepted = {subject for _, subject, answer in answers if answer.status_code == 202}
        ids = [answer.json()["correlationId"] for _, _, answer in answers
               if answer.status_code == 202]
        delivered = Notification.select().where(Notification.correlation_id.in_(ids),
                                                Notification.status == "delivered")

        def undelivered() -> str:
            rows = Notification.select(Notification.correlation_id, Notification.status).where(
                Notification.correlation_id.in_(ids), Notification.status != "delivered")
            found = {row.correlation_id: row.status for row in rows}
            missing = sorted(set(ids) - {row.correlation_id for row in Notification.select(
                Notification.correlation_id).where(Notification.correlation_id.in_(ids))})
            return f"not delivered: {found}; no row: {missing}\n" + explain()

        wait_for(lambda: delivered.count() == len(ids), 60, "every accepted send delivered",
                 undelivered)
        wait_for(lambda: len(handler.received) >= len(accepted), 10, "the sink to have them")
        subjects = [_subject(message) for message in handler.received]
        assert set(subjects) == accepted  # a 503 stored nothing that was sent later
        # A message whose outcome the dying server could not record is sent again, as after
        # a SIGKILL (tests/e2e/test_worker_durability.py): only those in flight, at most
        # the worker's --concurrency.
        assert len(subjects) - len(set(subjects)) <= IN_FLIGHT, "more than the in-flight re-sent"
        assert worker.poll() is None, "the worker died with the database"
        assert api.poll() is None
    finally:
        stop.set()
        _stop(api)
        _stop(worker)
        controller.stop(no_assert=True)
        runtime.configure(settings)
