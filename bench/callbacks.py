"""Delivery callbacks per worker process, beside the webhook-delivery floor measured in the
same run: callbacks/s of one burst-mode `herald worker` sending to a local HTTPS receiver,
against webhook notifications/s of the same worker to the same receiver (the same signed,
pinned POST underneath: what callbacks add is their rows, their per-workspace pass and the
job handed to the callbacks thread).

As bench/delivery.py: each subject run sits beside a floor run of its own, the order
alternating, the time of an empty burst run subtracted, the median pair kept.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

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
from bench.delivery import _per_second, _timed, _worker_rate

CALLBACKS = 250
WEBHOOKS = 250
ROUNDS = rounds(5, 3)
WORKER = [sys.executable, "-m", "engine.worker.worker", "--burst"]


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


def _callback_rate(env: dict[str, str], url: str) -> float:
    idle, _ = _timed(WORKER, env)
    _prepare_callbacks(env, url, CALLBACKS)
    busy, _ = _timed(WORKER, env)
    return _per_second(CALLBACKS, busy, idle)


def run() -> list[dict]:
    import trustme

    from tests.support.https_receiver import HttpsReceiver

    ca = trustme.CA()
    receiver = HttpsReceiver(ca)
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
            for number in range(ROUNDS):
                hooks = [{"channel": "webhook", "url": receiver.url("/hook", "localhost"),
                          "body": json.dumps({"order": i}), "contentType": "application/json",
                          "headers": {}} for i in range(WEBHOOKS)]
                pairs.append(paired(
                    lambda hooks=hooks: _worker_rate(env, hooks, WEBHOOKS)[0],
                    lambda: _callback_rate(env, receiver.url("/cb", "localhost")), number))
    finally:
        receiver.close()
        shutil.rmtree(ca_dir, ignore_errors=True)
    called = sum(1 for r in receiver.received if r.path == "/cb")
    if called != ROUNDS * CALLBACKS:
        raise RuntimeError(f"lost callbacks: {called}/{ROUNDS * CALLBACKS}")
    rate, floor = median_pair(pairs, float)
    return [figure("callback_delivery", rate, "callbacks/s per worker", floor)]


if __name__ == "__main__":
    for row in run():
        print(row)
