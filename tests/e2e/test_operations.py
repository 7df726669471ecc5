"""An operator's view of a real `herald serve` (gunicorn, two workers) and `herald worker`:
JSON logs, /readyz and /metrics, Redis stopped and started, an SMTP sink stopped; and no
secret in any line of either log."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from engine.database.models import Notification
from engine.queue.embedded_redis import free_port, start_redis
from tests import factories
from tests.conftest import TEST_SECRET_KEY
from tests.support.processes import wait_for
from tests.support.smtp_server import start_smtp

pytestmark = pytest.mark.slow
TOKEN = "metrics-token-e2e-0123456789abcdef"
SECRET_KEY = TEST_SECRET_KEY  # the one the factories sealed secrets with
SMTP_PASSWORD = "smtp-pw-hunter2-unique"
DB_PASSWORD = "db-pw-swordfish-unique"


def _with_password(url: str) -> str:
    """The test database's URL with a password: a trust-auth PostgreSQL ignores it, but
    every line that could quote the URL is made to."""
    user = "postgresql://postgres@"
    return url.replace(user, f"postgresql://postgres:{DB_PASSWORD}@") if url.startswith(user) \
        else url


def _start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    with log.open("wb") as out:
        return subprocess.Popen([sys.executable, "-m", "cli", *args], env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM to the whole group, and the wait for it to end (as soon as it does). The
    worker's own waits on the way out are bounded (the scheduler 10 s, the pub/sub thread
    3 s: engine/worker/worker_class.py); the rest is headroom for a loaded machine."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)


def _json_lines(log: Path) -> list[dict]:
    """Every finished line of the log, each of which must be one JSON object. A process
    still running may be midway through writing its last line: that one, without its
    newline yet, is left for the next read."""
    finished = log.read_text().split("\n")[:-1]
    return [json.loads(line) for line in finished if line.strip()]


def _scrape(url: str) -> dict[str, float]:
    answer = requests.get(url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
    assert answer.status_code == 200, answer.text
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
            for line in answer.text.splitlines() if line and not line.startswith("#")}


@pytest.fixture
def stack(settings, tmp_path):
    """Redis and an SMTP sink of the test's own, the API and a worker using them."""
    redis = [start_redis()]
    smtp_port = free_port()
    smtp = [start_smtp(smtp_port, auth=("herald", SMTP_PASSWORD))[0]]
    api_port, metrics_port = free_port(), free_port()
    env = {**os.environ, "HERALD_ENV": "test", "HERALD_DATABASE_URL": _with_password(
               settings.database_url),
           "HERALD_REDIS_URL": redis[0].url, "HERALD_SECRET_KEY": SECRET_KEY,
           "HERALD_LOG_FORMAT": "json", "HERALD_METRICS_TOKEN": TOKEN,
           "HERALD_WORKER_METRICS_PORT": str(metrics_port), "HOME": str(tmp_path),
           "HERALD_EMAIL_PROVIDER": f"smtp://herald:{SMTP_PASSWORD}@127.0.0.1:{smtp_port}"
                                    "?tls=none&timeout=2",
           "HERALD_RECONCILE_AFTER_SECONDS": "600",
           # The retry a second after the failure, not 30 s: growing waits, so a sink that
           # comes back late is still met by a later attempt.
           "HERALD_EMAIL_BACKOFF": "1,2,4,8,15,30,60"}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    logs = {"api": tmp_path / "api.log", "worker": tmp_path / "worker.log"}
    api = _start(["serve", "--host", "127.0.0.1", "--port", str(api_port), "--workers", "2"],
                 {k: v for k, v in env.items() if k != "HERALD_WORKER_METRICS_PORT"},
                 logs["api"])
    worker = _start(["worker"], env, logs["worker"])
    base = f"http://127.0.0.1:{api_port}"
    try:
        # Ready, not only alive: /readyz asks the database and Redis with a bound of a
        # second each, which a loaded machine can overrun while the processes start.
        wait_for(lambda: _answers(f"{base}/readyz"), 180, "the API ready",
                 logs["api"].read_text)
        yield {"base": base, "metrics": f"http://127.0.0.1:{metrics_port}/metrics",
               "redis": redis, "smtp": smtp, "smtp_port": smtp_port, "logs": logs,
               "api": api, "worker": worker}
    finally:
        _stop(api)
        _stop(worker)
        redis[-1].stop()
        if not smtp[-1].loop.is_closed():  # the test stops the sink and may end before
            smtp[-1].stop(no_assert=True)  # it starts a new one



def _answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=5).status_code == 200
    except requests.RequestException:  # not listening yet, or still booting its workers
        return False


def _send(stack, tenant_body, key, correlation: str) -> requests.Response:
    return requests.post(f"{stack['base']}/api/v1/notifications/send", json=tenant_body,
                         headers={"X-Api-Key": key, "X-Correlation-Id": correlation},
                         timeout=15)


def test_an_operator_sees_redis_go_away_and_come_back(settings, stack):
    ws = factories.workspace()
    tpl = factories.template(ws, defaults={"to": ["team@example.com"]})
    key = factories.api_key(ws)
    body = {"tenantId": str(ws.id), "templateId": str(tpl.id),
            "tags": [{"key": "name", "value": "Ada"}]}
    for n in range(6):
        assert _send(stack, body, key, f"ops-{n}").status_code == 202
    wait_for(lambda: Notification.select().where(Notification.status == "delivered").count()
             == 6, 180, "six deliveries", stack["logs"]["worker"].read_text)
    # Two gunicorn workers took the sends: each scrape sums both.
    for _ in range(4):
        assert _scrape(f"{stack['base']}/metrics")[
            'herald_notifications_accepted_total{channel="email"}'] == 6
    worker_metrics = _scrape(stack["metrics"])
    assert worker_metrics[
        'herald_deliveries_total{channel="email",outcome="delivered",provider="smtp"}'] == 6

    port = stack["redis"][0].port
    stack["redis"][0].stop()
    ready = requests.get(f"{stack['base']}/readyz", timeout=5)
    assert ready.status_code == 503 and "HERALD_REDIS_URL" in ready.json()["detail"]
    refused = [_send(stack, body, key, f"down-{n}") for n in range(8)]
    assert {r.status_code for r in refused} == {503}
    assert {r.json()["errorCode"] for r in refused} == {"service.unavailable"}
    assert all(r.headers["Retry-After"] == "5" for r in refused)
    assert _scrape(f"{stack['base']}/metrics")['herald_dependency_up{dependency="redis"}'] == 0
    stack["redis"].append(start_redis(port=port))
    wait_for(lambda: _answers(f"{stack['base']}/readyz"), 120, "readiness after Redis")
    assert _send(stack, body, key, "after").status_code == 202
    wait_for(lambda: Notification.select().where(Notification.status == "delivered").count()
             == 7, 120, "the delivery after the outage", stack["logs"]["worker"].read_text)

    stack["smtp"][0].stop()
    assert _send(stack, body, key, "smtp-down").status_code == 202
    wait_for(lambda: any(line.get("outcome") == "retry" for line in
                         _json_lines(stack["logs"]["worker"])), 60, "the retry line",
             stack["logs"]["worker"].read_text)
    # The sink back: a retry (HERALD_EMAIL_BACKOFF above) delivers it, and the log says so.
    stack["smtp"].append(start_smtp(stack["smtp_port"], auth=("herald", SMTP_PASSWORD))[0])
    wait_for(lambda: any(line.get("outcome") == "delivered"
                         and line.get("correlationId") == "smtp-down"
                         for line in _json_lines(stack["logs"]["worker"])), 90,
             "the delivery on retry", stack["logs"]["worker"].read_text)
    # A tracking link's token stays out of the access line.
    requests.get(f"{stack['base']}/t/o/TRACKINGTOKEN0123456789", timeout=10)
    _stop(stack["api"])
    _stop(stack["worker"])
    api_lines = _json_lines(stack["logs"]["api"])
    worker_lines = _json_lines(stack["logs"]["worker"])

    # The API: one line per incident per process (two gunicorn workers), no traceback.
    outage = [line for line in api_lines if line["logger"] == "herald.dependencies"
              and "unreachable" in line["message"]]
    assert 1 <= len(outage) <= 2 and all(line["dependency"] == "redis" for line in outage)
    assert not any("exception" in line for line in api_lines)
    access = [line for line in api_lines if line["logger"] == "gunicorn.access"]
    assert {"ops-0", "down-0", "after"} <= {line.get("correlationId") for line in access}
    assert any(line["status"] == 503 and line["correlationId"] == "down-0" for line in access)
    assert any(line["logger"] == "herald.startup" for line in api_lines)

    # The worker: a line per delivery with its ids, the retry with its reason and time.
    delivered = [line for line in worker_lines if line.get("outcome") == "delivered"]
    assert {line["correlationId"] for line in delivered} >= {f"ops-{n}" for n in range(6)}
    assert all(line["notificationId"] for line in delivered)
    retry = next(line for line in worker_lines if line.get("outcome") == "retry")
    assert retry["correlationId"] == "smtp-down" and retry["reason"] and retry["retryAt"]
    later = next(line for line in delivered if line["correlationId"] == "smtp-down")
    retries = [line for line in worker_lines if line.get("outcome") == "retry"]
    # Each attempt before the delivery was a retry of the same notification (one if the
    # sink came back within the first wait).
    assert later["notificationId"] == retry["notificationId"]
    assert later["attempt"] == len(retries) + 1 >= 2
    assert {line["notificationId"] for line in retries} == {retry["notificationId"]}
    assert not any("Successfully completed" in line["message"] for line in worker_lines)
    assert sum("Redis unreachable" in line["message"] for line in worker_lines) == 1
    assert not any("exception" in line for line in worker_lines)

    # No secret in any line of either log.
    text = stack["logs"]["api"].read_text() + stack["logs"]["worker"].read_text()
    assert any(line.get("path") == "/t/o/***" for line in access)
    for secret in (SMTP_PASSWORD, DB_PASSWORD, SECRET_KEY, TOKEN, key, "TRACKINGTOKEN0123456789"):
        assert secret not in text
