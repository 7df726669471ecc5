"""Delivery callbacks per worker process, beside the webhook-delivery floor measured in the
same run: callbacks/s of one burst-mode `herald worker` sending to a local HTTPS receiver,
against webhook notifications/s of the same worker to the same receiver (the same signed,
pinned POST underneath: what callbacks add is their rows, their per-workspace pass, one
callback at a time, and its job).

Both rates are read inside the run, from the receiver: the requests that reached it in a
burst run, from its first arrival to its last. A worker's start and exit (about a second,
which varied by a second from run to run on a loaded machine) fall outside that span by
construction; once a count less an empty run's time, 250 callbacks read 531, then 10,647
and 2,461/s. Two figures: ``callback_delivery``, by the receiver's clock, and
``callback_delivery_cpu``, by the worker process's CPU time over the same span (read from
/proc at the first and the last arrival), which a machine shared with other work moves far
less. Each side sends COUNT requests; each subject run sits beside a floor run of its own,
the order alternating, and the median pair is kept.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

from bench.common import (
    ROOT,
    bench_database_url,
    bench_env,
    figure,
    median_pair,
    paired,
    redis_server,
    rounds,
)
from bench.delivery import _prepare

# Enough that a run's span is seconds, not a few hundred milliseconds of one scheduler's
# time slice, and a second of the worker's CPU (10 ms ticks). A pass yields after
# PASS_SECONDS (5 s) and enqueues the rest, which a burst run may leave: the span counts
# only what reached the receiver in that run.
COUNT = 500
ROUNDS = rounds(5, 3)
WORKER = [sys.executable, "-m", "engine.worker.worker", "--burst"]


TICK = os.sysconf("SC_CLK_TCK")


class _Stamped(list):
    """The receiver's list of requests, each arrival's time and the worker's CPU time then
    kept beside it."""

    def __init__(self) -> None:
        super().__init__()
        self.at: list[tuple[float, float]] = []
        self.worker = 0  # the pid of the worker running

    def append(self, item: Any) -> None:
        self.at.append((time.perf_counter(), _cpu(self.worker)))
        super().append(item)


def _cpu(pid: int) -> float:
    """Seconds of CPU (user and system, every thread) the process has used."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / TICK


def _burst(env: dict[str, str], received: _Stamped) -> None:
    process = subprocess.Popen(WORKER, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    received.worker = process.pid
    if process.wait() != 0:
        raise RuntimeError(f"{' '.join(WORKER)} failed")


def _rate(received: _Stamped, first: int, path: str) -> tuple[tuple[float, float], int]:
    """Requests to ``path`` per second of the receiver's clock and per CPU second of the
    worker, from the first arrival after index ``first`` to the last; how many arrived."""
    stamps = [at for request, at in zip(received[first:], received.at[first:], strict=True)
              if request.path == path]
    if len(stamps) < 2:
        raise RuntimeError(f"{len(stamps)} requests reached {path} in a run")
    (wall0, cpu0), (wall1, cpu1) = stamps[0], stamps[-1]
    count = len(stamps) - 1
    return (count / max(wall1 - wall0, 1e-6), count / max(cpu1 - cpu0, 1 / TICK)), len(stamps)


def _prepare_callbacks(env: dict[str, str], url: str, count: int) -> None:
    """``count`` outcomes recorded as the worker records them: each writes its callback and
    enqueues its workspace's job."""
    from config.settings import load_settings
    from engine import runtime
    from engine.callbacks import recording, targets
    from engine.database.db import database
    from engine.database.models import utcnow
    from tests import factories

    runtime.configure(load_settings(env))
    database.connect(reuse_if_open=True)
    ws = factories.workspace()
    targets.set_target(ws, url)
    # Already delivered: a queued row would be delivered by the worker (its reconciler).
    n = factories.notification(ws, factories.email_payload(), status="delivered")
    for i in range(count):
        recording.record(n, [recording.Outcome("delivered", f"r{i}@example.net", utcnow(),
                                               {"provider": "smtp"})])
    database.close()


Rates = tuple[float, float]  # per second of the receiver's clock, per CPU second


def _callback_rate(env: dict[str, str], url: str, received: _Stamped) -> Rates:
    first = len(received)
    _prepare_callbacks(env, url, COUNT)
    _burst(env, received)
    rates, arrived = _rate(received, first, "/cb")
    for _ in range(5):  # what a pass that yielded left: sent, not timed
        if arrived >= COUNT:
            break
        _burst(env, received)
        arrived = sum(1 for r in received[first:] if r.path == "/cb")
    return rates


def _webhook_rate(env: dict[str, str], url: str, received: _Stamped) -> Rates:
    first = len(received)
    _prepare(env, [{"channel": "webhook", "url": url, "body": json.dumps({"order": i}),
                    "contentType": "application/json", "headers": {}} for i in range(COUNT)])
    _burst(env, received)
    return _rate(received, first, "/hook")[0]


def run() -> list[dict]:
    import trustme

    from tests.support.https_receiver import HttpsReceiver

    ca = trustme.CA()
    receiver = HttpsReceiver(ca)
    received = receiver.received = _Stamped()
    ca_dir = tempfile.mkdtemp(prefix="herald-bench-")
    ca_path = os.path.join(ca_dir, "ca.pem")
    ca.cert_pem.write_to_path(ca_path)
    pairs = []
    try:
        with redis_server() as redis:
            env = bench_env(bench_database_url(), redis.url,
                            HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS="true",
                            REQUESTS_CA_BUNDLE=ca_path)
            subprocess.run([sys.executable, "-m", "cli", "db", "upgrade"], env=env, cwd=ROOT,
                           check=True, capture_output=True)
            hook, cb = receiver.url("/hook", "localhost"), receiver.url("/cb", "localhost")
            for number in range(ROUNDS):
                pairs.append(paired(lambda: _webhook_rate(env, hook, received),
                                    lambda: _callback_rate(env, cb, received), number))
    finally:
        receiver.close()
        shutil.rmtree(ca_dir, ignore_errors=True)
    for path in ("/cb", "/hook"):
        arrived = sum(1 for r in received if r.path == path)
        if arrived != ROUNDS * COUNT:
            raise RuntimeError(f"lost requests to {path}: {arrived}/{ROUNDS * COUNT}")
    print("pairs (callbacks, webhooks) per second and per CPU second:",
          ", ".join(f"({s[0]:.0f}, {f[0]:.0f}; {s[1]:.0f}, {f[1]:.0f})" for s, f in pairs),
          file=sys.stderr)
    wall, wall_floor = median_pair(pairs, lambda rates: rates[0])
    cpu, cpu_floor = median_pair(pairs, lambda rates: rates[1])
    return [figure("callback_delivery", wall[0], "callbacks/s per worker", wall_floor[0]),
            figure("callback_delivery_cpu", cpu[1], "callbacks per worker CPU second",
                   cpu_floor[1])]


if __name__ == "__main__":
    for row in run():
        print(row)
