"""Delivery against providers that take their time, as real ones do: one worker process at
its defaults (32 deliveries in flight, spread over four workspaces: one workspace alone has
at most a quarter of them) beside a bare client with as many threads into the same
servers. ``python -m bench slow_delivery`` runs it alone.

- ``email_delivery_50ms`` / ``email_delivery_200ms``: emails/s into an SMTP server that takes
  50 or 200 ms a message; floor: a bare smtplib client, 32 threads (bench.smtp_floor).
- ``webhook_delivery_300ms``: webhooks/s to an HTTPS receiver that answers in 300 ms; floor:
  a bare requests client, 32 kept-alive sessions (bench.http_floor).
- ``rss_worker_32_in_flight``: the worker's peak RSS during the 200 ms email run.
- ``tarpit_other_workspace_p99_ms``: a workspace whose own relay accepts and never answers
  has 100 sends queued; four other workspaces send one email every 50 ms through the
  service's relay (answering at once); the p99 of their time from enqueue to arrival.

Sizes shrink with ``HERALD_BENCH_SCALE`` (a fraction, for a smoke run).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from bench.common import ROOT, bench_database_url, bench_env, figure, redis_server
from bench.delivery import _per_second, _timed
from engine.queue.embedded_redis import free_port

SCALE = float(os.environ.get("HERALD_BENCH_SCALE", "1"))
THREADS = 32  # the worker's default --concurrency, and the floors' threads
EMAILS = max(THREADS, int(640 * SCALE))
WEBHOOKS = max(THREADS, int(640 * SCALE))
WORKSPACES = 4  # each at most a quarter of the slots in flight (HERALD_WORKSPACE_CONCURRENCY)
TARPIT_QUEUED = 100
NEIGHBOURS = max(8, int(120 * SCALE))
NEIGHBOUR_EVERY = 0.05


class Tarpit:
    """A relay that accepts every connection and never says a word."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=256)
        self.port = self.listener.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        try:
            while True:
                self.held.append(self.listener.accept()[0])
        except OSError:
            return

    def close(self) -> None:
        self.listener.close()
        for conn in self.held:
            conn.close()


def _prepare(env: dict[str, str], payloads: list[dict]) -> None:
    """Rows and jobs for the worker, spread over WORKSPACES workspaces in turn: one
    workspace alone has at most its share of a process's slots in flight."""
    import uuid

    from config.settings import load_settings
    from engine import runtime
    from engine.database.db import database
    from engine.database.models import Notification
    from engine.delivery.queue import enqueue_notification, is_bulk
    from tests import factories

    runtime.configure(load_settings(env))
    database.connect(reuse_if_open=True)
    spaces = [factories.workspace() for _ in range(WORKSPACES)]
    rows = []
    with database.atomic():
        for i, payload in enumerate(payloads):
            ws = spaces[i % WORKSPACES]
            n = Notification.create(account=ws.account_id, workspace=ws, version_number=1,
                                    channel=payload["channel"], correlation_id="bench",
                                    delivery_id=str(uuid.uuid4()), payload=payload)
            rows.append((str(n.id), is_bulk(payload["channel"], payload), ws.id))
    for nid, bulk, workspace in rows:
        enqueue_notification(nid, bulk=bulk, workspace=workspace)
    database.close()


def _worker_rate(env: dict[str, str], payloads: list[dict]) -> tuple[float, float]:
    """(Deliveries/s of one burst-mode worker less its empty run, its peak RSS in MiB)."""
    args = [sys.executable, "-m", "engine.worker.worker", "--burst"]
    idle, _ = _timed(args, env)
    _prepare(env, payloads)
    busy, rss = _timed(args, env)
    return _per_second(len(payloads), busy, idle), rss


def _bare(module: str, *args: str, env: dict[str, str]) -> float:
    out = subprocess.run([sys.executable, "-m", module, *args], env=env, cwd=ROOT,
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def _email_round(env: dict[str, str], handler, port: int, delay: float,
                 tag: str) -> tuple[float, float, float]:
    """(Herald's emails/s, the bare client's, the worker's peak RSS) at ``delay``."""
    from tests import factories

    handler.delay = delay
    emails = [factories.email_payload(subject=f"{tag} {i}") for i in range(EMAILS)]
    rate, rss = _worker_rate(env, emails)
    floor = _bare("bench.smtp_floor", str(port), str(EMAILS), str(THREADS), env=env)
    return rate, floor, rss


def _webhook_round(env: dict[str, str], receiver, ca_path: str) -> tuple[float, float]:
    url = receiver.url("/slow", "localhost")
    hooks = [{"channel": "webhook", "url": url, "body": json.dumps({"order": i}),
              "contentType": "application/json", "headers": {}} for i in range(WEBHOOKS)]
    rate, _ = _worker_rate(env, hooks)
    floor = _bare("bench.http_floor", url, str(WEBHOOKS), str(THREADS), ca_path, env=env)
    return rate, floor


def _tarpit_p99(env: dict[str, str], handler) -> float:
    """Milliseconds, p99 of the neighbours' enqueue-to-arrival, beside a hanging relay."""
    from config.settings import load_settings
    from engine import runtime
    from engine.database.db import database
    from engine.delivery.queue import enqueue_notification
    from tests import factories

    handler.delay = 0.0
    tarpit = Tarpit()
    runtime.configure(load_settings(env))
    database.connect(reuse_if_open=True)
    hung = factories.workspace(email_provider=json.dumps(
        {"plugin": "smtp", "url": f"smtp://127.0.0.1:{tarpit.port}?tls=none&timeout=30"}))
    for i in range(TARPIT_QUEUED):
        n = factories.notification(hung, factories.email_payload(to=[f"stuck{i}@example.net"]))
        enqueue_notification(str(n.id), workspace=hung.id)
    others = [factories.workspace() for _ in range(4)]
    first = len(handler.received)
    worker = subprocess.Popen([sys.executable, "-m", "engine.worker.worker"], env=env,
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    sent: dict[str, float] = {}
    try:
        time.sleep(3.0)  # the worker started and took its share of the tarpit's sends
        for i in range(NEIGHBOURS):
            ws = others[i % len(others)]
            to = f"neighbour{i}@example.org"
            n = factories.notification(ws, factories.email_payload(to=[to]))
            sent[to] = time.monotonic()
            enqueue_notification(str(n.id), workspace=ws.id)
            time.sleep(NEIGHBOUR_EVERY)
        deadline = time.monotonic() + 120
        while len(handler.received) - first < NEIGHBOURS and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
        tarpit.close()
        database.close()
    waits = sorted((m.at - sent[m.rcpt_tos[0]]) * 1000 for m in handler.received[first:]
                   if m.rcpt_tos[0] in sent)
    if len(waits) < NEIGHBOURS:
        raise RuntimeError(f"only {len(waits)} of {NEIGHBOURS} neighbours' emails arrived")
    return waits[min(len(waits) - 1, int(len(waits) * 0.99))]


def run() -> list[dict]:
    import trustme

    from tests.support.https_receiver import HttpsReceiver, Scripted
    from tests.support.smtp_server import start_smtp

    figures: list[dict] = []
    smtp, handler = start_smtp(free_port())
    ca = trustme.CA()
    receiver = HttpsReceiver(ca)
    receiver.script["/slow"] = [Scripted(delay=0.3)]
    ca_dir = tempfile.mkdtemp(prefix="herald-bench-")
    ca_path = os.path.join(ca_dir, "ca.pem")
    ca.cert_pem.write_to_path(ca_path)
    try:
        with redis_server() as redis:
            env = bench_env(bench_database_url(), redis.url,
                            HERALD_EMAIL_PROVIDER=f"smtp://127.0.0.1:{smtp.port}?tls=none",
                            HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS="true",
                            REQUESTS_CA_BUNDLE=ca_path)
            subprocess.run([sys.executable, "-m", "cli", "db", "upgrade"], env=env, cwd=ROOT,
                           check=True, capture_output=True)
            for delay, name in ((0.05, "email_delivery_50ms"), (0.2, "email_delivery_200ms")):
                rate, floor, rss = _email_round(env, handler, smtp.port, delay, name)
                figures.append(figure(name, rate, "emails/s per worker", floor))
            figures.append(figure("rss_worker_32_in_flight", rss, "MiB", None))
            rate, floor = _webhook_round(env, receiver, ca_path)
            figures.append(figure("webhook_delivery_300ms", rate, "webhooks/s per worker",
                                  floor))
            figures.append(figure("tarpit_other_workspace_p99_ms", _tarpit_p99(env, handler),
                                  "ms", None))
    finally:
        smtp.stop()
        receiver.close()
        shutil.rmtree(ca_dir, ignore_errors=True)
    return figures


if __name__ == "__main__":
    for row in run():
        print(row)
