"""transactional_p99_during_fanout_ms: how long another workspace's password reset waits
while one workspace fans a Marketing email with a 1 MiB attachment out to 500 recipients
(issue 30, finding 4). One real `herald worker` process and the bench's SMTP server; the
fan-out is enqueued as the API enqueues it (the bulk queue), then a transactional email of
another workspace is accepted every ``SPACING`` seconds until the fan-out ends, each timed
from its acceptance (row committed, job enqueued) to its arrival at the SMTP server.
Target: p99 under 2,000 ms. Floor: the same sends' p99 with the worker idle.
`python -m bench.fairness` prints the rows; `run()` returns them.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from bench.common import ROOT, bench_database_url, bench_env, figure, redis_server, stop_worker
from engine.queue.embedded_redis import free_port

# 500 recipients: about half a minute of fan-out, some 130 transactional sends timed
# across it; a thousand took over a minute of `make bench`'s ten.
FANOUT = 500
ATTACHMENT_BYTES = 1 << 20
SPACING = 0.25
IDLE_SENDS = 20
TIMEOUT = 600.0


class Sink:
    """bench.smtp_sink in its own process; ``at``: each recipient's arrival time."""

    def __init__(self, env: dict[str, str]) -> None:
        self.port = free_port()
        self.at: dict[str, float] = {}
        self.readers = 0  # messages of the fan-out arrived
        self.arrived = threading.Condition()
        self.proc = subprocess.Popen([sys.executable, "-m", "bench.smtp_sink", str(self.port)],
                                     env=env, cwd=ROOT, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("bench.smtp_sink did not start")
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            address, at = line.split()
            with self.arrived:
                self.at[address] = float(at)
                self.readers += address.startswith("reader")
                self.arrived.notify_all()

    def wait(self, predicate, what: str) -> None:
        with self.arrived:
            if not self.arrived.wait_for(predicate, TIMEOUT):
                raise RuntimeError(f"bench.fairness: timed out waiting for {what}")

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _accept(ws, payload: dict, bulk: bool = False) -> float:
    """A row committed and its job enqueued, as the API accepts a send: when it was."""
    from engine.database.models import Notification
    from engine.delivery.queue import enqueue_notification

    accepted = time.monotonic()
    n = Notification.create(account=ws.account_id, workspace=ws, version_number=1,
                            channel="email", correlation_id="bench",
                            delivery_id=str(uuid.uuid4()), payload=payload)
    enqueue_notification(str(n.id), bulk=bulk, workspace=ws.id)
    return accepted


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def _resets(ws, sink: Sink, count: int | None, until=None) -> list[float]:
    """Transactional sends one every SPACING s, each waited for: their latencies in ms."""
    from tests import factories

    latencies = []
    number = 0
    while (count is None or number < count) and not (until and until()):
        address = f"reset-{uuid.uuid4().hex[:12]}@example.org"
        accepted = _accept(ws, factories.email_payload(to=[address], subject="Reset"))
        sink.wait(lambda a=address: a in sink.at, "a password reset")
        latencies.append((sink.at[address] - accepted) * 1000)
        number += 1
        time.sleep(max(0.0, SPACING - (time.monotonic() - accepted)))
    return latencies


def run() -> list[dict]:
    from config.settings import load_settings
    from engine import runtime
    from engine.database.db import database
    from tests import factories

    sink = Sink(bench_env("", ""))
    worker = None
    try:
        with redis_server() as redis:
            env = bench_env(bench_database_url(), redis.url,
                            HERALD_EMAIL_PROVIDER=f"smtp://127.0.0.1:{sink.port}?tls=none")
            subprocess.run([sys.executable, "-m", "cli", "db", "upgrade"], env=env, cwd=ROOT,
                           check=True, capture_output=True)
            runtime.configure(load_settings(env))
            database.connect(reuse_if_open=True)
            marketer, other = factories.workspace(), factories.workspace()
            worker = subprocess.Popen([sys.executable, "-m", "engine.worker.worker"],
                                      env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, start_new_session=True)
            _resets(other, sink, 1)  # the worker started: not a figure
            idle = _resets(other, sink, IDLE_SENDS)
            recipients = [f"reader{i}@example.net" for i in range(FANOUT)]
            content = base64.b64encode(os.urandom(ATTACHMENT_BYTES)).decode("ascii")
            cpu_before = _cpu_seconds(worker.pid)
            started = time.monotonic()
            _accept(marketer, factories.email_payload(
                emailType="Marketing", to=recipients, subject="News",
                attachments=[{"name": "catalogue.pdf", "contentType": "application/pdf",
                              "content": content, "cid": None}]), bulk=True)
            sink.wait(lambda: sink.readers > 0, "the fan-out to start")
            during = _resets(other, sink, None, until=lambda: sink.readers >= FANOUT)
            sink.wait(lambda: sink.readers >= FANOUT, "the fan-out to finish")
            fanout_seconds = time.monotonic() - started
            fanout_cpu = _cpu_seconds(worker.pid) - cpu_before
            if os.environ.get("HERALD_BENCH_VERBOSE"):
                print("idle", [round(v) for v in idle], "during", [round(v) for v in during])
            database.close()
    finally:
        if worker is not None:
            stop_worker(worker)
        sink.stop()
    return [
        figure("transactional_p99_during_fanout_ms", _p99(during),
               f"ms, p99 of {len(during)} resets during the fan-out", _p99(idle),
               higher_is_better=False),
        figure("fanout_attachment_seconds", fanout_seconds,
               f"s, {FANOUT} recipients x 1 MiB attachment", None),
        figure("fanout_attachment_worker_cpu_s", fanout_cpu, "s CPU of the worker process",
               None),
    ]


if __name__ == "__main__":
    for row in run():
        print(row)
