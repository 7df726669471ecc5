"""`herald worker` as run, against what production throws at it: a Redis restart under a burst
of sends, a killed worker process, a killed parent, a Redis that is not there yet.

The worker's reconciler grace is 600 s here: what is delivered within the tests' deadlines was
taken up at once, not by the reconciler's periodic pass.
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from peewee import fn
from redis import Redis
from rq import Queue, Worker

from cli.app import create_app
from engine.database.db import database
from engine.database.models import Notification
from engine.delivery.queue import JOB_FUNCTION
from engine.queue.embedded_redis import EmbeddedRedis, free_port, start_redis
from engine.queue.queueing import QUEUE_NAME
from tests import factories
from tests.conftest import TEST_SECRET_KEY
from tests.support.processes import children, descendants, parent_of, running, wait_for
from tests.support.smtp_server import start_smtp

pytestmark = pytest.mark.slow


@dataclass
class Herald:
    """A `herald worker` started by a test, its output in a file."""

    process: subprocess.Popen
    log: Path

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def lines(self, fragment: str) -> list[str]:
        return [line for line in self.text().splitlines() if fragment in line]

    def workers(self) -> set[int]:
        return children(self.process.pid)


@pytest.fixture
def smtp_server():
    controller, handler = start_smtp(free_port())
    yield controller.port, handler
    controller.stop()


@pytest.fixture
def start_herald(tmp_path):
    started: list[Herald] = []

    def start(settings, smtp_port: int, *args: str, redis_url: str | None = None) -> Herald:
        env = {**os.environ, "HERALD_ENV": "test", "HERALD_DATABASE_URL": settings.database_url,
               "HERALD_REDIS_URL": redis_url or settings.redis_url,
               "HERALD_SECRET_KEY": TEST_SECRET_KEY,
               "HERALD_EMAIL_PROVIDER": f"smtp://127.0.0.1:{smtp_port}?tls=none",
               "HERALD_RECONCILE_AFTER_SECONDS": "600"}
        log = tmp_path / f"herald-{len(started)}.log"
        with log.open("wb") as out:
            process = subprocess.Popen([sys.executable, "-m", "cli", "worker", *args], env=env,
                                       stdout=out, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        started.append(Herald(process, log))
        return started[-1]

    yield start
    for herald in started:  # whatever a failed test left: the whole process group
        with contextlib.suppress(ProcessLookupError):
            os.killpg(herald.process.pid, signal.SIGKILL)
        herald.process.wait(timeout=10)


def _scheduler_pid(redis_url: str) -> int | None:
    return Queue(QUEUE_NAME, connection=Redis.from_url(redis_url)).scheduler_pid


def _ready(herald: Herald, redis_url: str) -> bool:
    """Both worker processes listening (RQ lists them) and the scheduler running under one."""
    listening = Worker.count(connection=Redis.from_url(redis_url))
    return listening == 2 and _scheduler_under(herald, redis_url) is not None


def _scheduler_under(herald: Herald, redis_url: str) -> int | None:
    """The scheduler's pid when it runs as the child of one of the worker processes."""
    pid = _scheduler_pid(redis_url)
    return pid if pid and running(pid) and parent_of(pid) in herald.workers() else None


def _statuses() -> str:
    counts = Notification.select(Notification.status, fn.COUNT(Notification.id).alias("n")) \
        .group_by(Notification.status)
    return f"statuses: {({row.status: row.n for row in counts})}"


def _subjects(handler) -> collections.Counter:
    return collections.Counter(m.content.split(b"Subject: ")[1].split(b"\r\n")[0].decode()
                               for m in handler.received)


def _restart(server: EmbeddedRedis) -> EmbeddedRedis:
    """SHUTDOWN NOSAVE, then a new empty server on the same port."""
    Redis.from_url(server.url).shutdown(nosave=True)
    server.process.wait(timeout=10)
    shutil.rmtree(server.workdir, ignore_errors=True)
    return start_redis(port=server.port)


class _Burst(threading.Thread):
    """Sends through the API until stopped (at most ``limit``, under the rate limits)."""

    def __init__(self, client, tenant: dict, limit: int = 250) -> None:
        super().__init__(daemon=True)
        self.client, self.tenant, self.limit = client, tenant, limit
        self.accepted: list[str] = []
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            for i in range(self.limit):
                if self.stop.is_set():
                    return
                body = {**self.tenant["body"], "tags": [{"key": "name", "value": f"n{i}"}]}
                answer = self.client.post("/api/v1/notifications/send", json=body,
                                          headers={"X-Api-Key": self.tenant["key"]})
                if answer.status_code == 202:
                    self.accepted.append(f"n{i}")
        finally:
            database.close()


def _tenant() -> dict:
    ws = factories.workspace()
    template = factories.template(ws, defaults={"to": ["team@example.com"]})
    return {"key": factories.api_key(ws), "body": {"tenantId": str(ws.id),
                                                    "templateId": str(template.id)}}


def test_a_redis_restart_under_a_burst_stops_nothing_and_loses_nothing(settings, smtp_server,
                                                                      start_herald):
    port, handler = smtp_server
    # A slow relay while the burst runs, so a backlog builds in Redis however fast the
    # burst is on a loaded machine; a quick one once Redis is back, for the drain.
    handler.delay = 0.5
    servers = [start_redis()]
    try:
        own = settings.with_changes(redis_url=servers[0].url)
        burst = _Burst(create_app(own).test_client(), _tenant())
        herald = start_herald(own, port, "--processes", "2")
        wait_for(lambda: _ready(herald, own.redis_url), 60,
                 "two worker processes and the scheduler", herald.text)
        workers = herald.workers()
        queue_key = Queue(QUEUE_NAME, connection=Redis.from_url(own.redis_url)).key
        burst.start()
        wait_for(lambda: len(burst.accepted) >= 40
                 and Redis.from_url(own.redis_url).llen(queue_key) >= 10, 30, "a backlog")
        dropped = Redis.from_url(own.redis_url).llen(queue_key)
        servers.append(_restart(servers[0]))
        handler.delay = 0.02
        accepted_before = len(burst.accepted)
        wait_for(lambda: len(burst.accepted) >= accepted_before + 30, 30,
                 "sends accepted after the restart")
        burst.stop.set()
        burst.join(timeout=30)
        accepted = burst.accepted
        assert dropped >= 10, "no job was in Redis at the restart: nothing to lose"
        wait_for(lambda: Notification.select().where(Notification.status == "delivered")
                 .count() == len(accepted), 60, "every accepted send delivered", _statuses)
        assert Notification.select().count() == len(accepted)
        assert _subjects(handler) == collections.Counter(f"Hi {name}" for name in accepted)
        # A wait, not an exit: the same processes ran throughout.
        assert herald.process.poll() is None and herald.workers() == workers
        per_process = collections.Counter(
            re.search(r"\[(\d+)\]", line).group(1) for line in herald.lines("Redis unreachable"))
        assert per_process and max(per_process.values()) == 1, herald.text()
        assert herald.lines("Redis is back after")
        assert "Traceback" not in herald.text() and "unhandled exception" not in herald.text()
        herald.process.send_signal(signal.SIGTERM)
        assert herald.process.wait(timeout=30) == 0
    finally:
        for server in servers:
            server.stop()


def test_a_killed_worker_process_is_replaced_and_the_scheduler_runs_again(settings, smtp_server,
                                                                           start_herald):
    port, _ = smtp_server
    herald = start_herald(settings, port, "--processes", "2")
    wait_for(lambda: _ready(herald, settings.redis_url), 60,
             "two worker processes and the scheduler", herald.text)
    scheduler = _scheduler_pid(settings.redis_url)
    victim = parent_of(scheduler)
    first = herald.workers()
    os.kill(victim, signal.SIGKILL)
    wait_for(lambda: len(herald.workers()) == 2 and victim not in herald.workers(), 30,
             "a new worker process", herald.text)
    assert len(herald.workers() & first) == 1
    wait_for(lambda: not running(scheduler), 30, "the killed process's scheduler to end with it")
    wait_for(lambda: _scheduler_under(herald, settings.redis_url), 30,
             "the scheduler to run again", herald.text)
    (line,) = herald.lines("killed by SIGKILL")
    assert f"(pid {victim})" in line and line.endswith("starting a new one")
    # It schedules: a delivery due in a second goes out (the reconciler would leave a
    # scheduled job alone).
    nid = str(factories.notification(factories.workspace(), factories.email_payload()).id)
    Queue(QUEUE_NAME, connection=Redis.from_url(settings.redis_url)).enqueue_in(
        timedelta(seconds=1), JOB_FUNCTION, nid, job_id=nid)
    wait_for(lambda: Notification.get_by_id(nid).status == "delivered", 30,
             "the scheduled delivery", _statuses)


def test_sigkill_of_the_parent_leaves_nothing_of_it_running(settings, smtp_server, start_herald):
    port, _ = smtp_server
    herald = start_herald(settings, port, "--processes", "2")
    # Three Python processes start and import Herald: on a loaded machine that alone can
    # take a minute, so the bound is generous (the wait ends as soon as they are up).
    wait_for(lambda: _ready(herald, settings.redis_url), 180,
             "two worker processes and the scheduler", herald.text)
    # The tree, once it holds exactly the two worker processes and the scheduler: a
    # process just started (a scheduler's Popen, say) would otherwise be counted or missed.
    wait_for(lambda: len(descendants(herald.process.pid)) == 3, 60,
             "exactly two worker processes and the scheduler",
             lambda: f"tree: {descendants(herald.process.pid)}")
    tree = descendants(herald.process.pid)
    assert len(tree) == 3  # two worker processes and the scheduler
    os.kill(herald.process.pid, signal.SIGKILL)
    herald.process.wait(timeout=10)
    wait_for(lambda: not any(running(pid) for pid in tree), 120, "every process of it to end",
             lambda: f"still running: {[pid for pid in tree if running(pid)]}")
    # Each ended as on SIGTERM: the scheduler's lock released, RQ's records removed.
    assert _scheduler_pid(settings.redis_url) is None
    assert Worker.count(connection=Redis.from_url(settings.redis_url)) == 0


def test_redis_down_at_start_is_one_line_and_down_later_is_waited_for(settings, smtp_server,
                                                                      start_herald):
    """At start a Redis that does not answer is one line naming the setting, exit 1 (the
    process supervisor restarts the worker); once running, an outage is waited out with one
    line and a stop still stops."""
    port, _ = smtp_server
    nid = str(factories.notification(factories.workspace(), factories.email_payload()).id)
    redis_port = free_port()
    url = f"redis://127.0.0.1:{redis_port}/0"
    refused = start_herald(settings, port, redis_url=url)
    assert refused.process.wait(timeout=60) == 1
    assert refused.text().startswith("herald: cannot reach Redis: "), refused.text()
    assert "(check HERALD_REDIS_URL)" in refused.text()
    assert refused.text().count("\n") == 1 and "Traceback" not in refused.text()
    server = start_redis(port=redis_port)
    herald = start_herald(settings, port, redis_url=url)
    try:
        # Redis holds no marker: the queued row is enqueued at once, not after 600 s.
        wait_for(lambda: Notification.get_by_id(nid).status == "delivered", 30,
                 "the delivery once Redis is there", herald.text)
        Redis.from_url(server.url).shutdown(nosave=True)
        wait_for(lambda: len(herald.lines("Redis unreachable")) == 1, 30, "the outage",
                 herald.text)
        assert herald.process.poll() is None and "Traceback" not in herald.text()
        herald.process.send_signal(signal.SIGTERM)
        assert herald.process.wait(timeout=30) == 0
    finally:
        server.stop()


def test_redis_refusing_the_worker_is_a_configuration_error(settings, start_herald):
    herald = start_herald(settings, 25, "--processes", "2",
                          redis_url=settings.redis_url.rsplit("/", 1)[0] + "/99")
    assert herald.process.wait(timeout=60) == 2
    # Checked before any worker process starts: one line, naming the setting.
    assert herald.text() == ("herald: configuration error: HERALD_REDIS_URL: Redis refuses "
                             "this process: DB index is out of range\n"), herald.text()
