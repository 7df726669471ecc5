"""A real worker and real SMTP servers: a workspace whose own provider answers slowly does
not hold another workspace's mail behind its burst (issue 37; docs/delivery.md, "Queues and
fairness")."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from engine.store.embedded_redis import free_port
from engine.store.queueing import enqueue_notification
from tests import factories
from tests.e2e.test_worker_durability import _delivered, _stop, _wait, _worker_env
from tests.support.smtp_server import start_smtp

BURST = 8
SLOW_SECONDS = 0.5  # the slow provider's answer to each message


@pytest.fixture
def servers():
    slow, slow_handler = start_smtp(free_port())
    fast, fast_handler = start_smtp(free_port())
    slow_handler.delay = SLOW_SECONDS
    yield (slow.port, slow_handler), (fast.port, fast_handler)
    slow.stop()
    fast.stop()


@pytest.mark.slow
def test_a_workspace_is_not_held_behind_anothers_burst_through_a_slow_provider(settings,
                                                                               servers):
    (slow_port, slow), (fast_port, fast) = servers
    crowded = factories.workspace(email_provider=json.dumps(
        {"plugin": "smtp", "url": f"smtp://127.0.0.1:{slow_port}?tls=none"}))
    burst = [str(factories.notification(crowded, factories.email_payload(
        to=[f"reader{i}@example.net"], subject=f"digest {i}")).id) for i in range(BURST)]
    for nid in burst:
        enqueue_notification(nid, workspace=crowded.id)
    other = factories.workspace()  # through the service's own provider, which is quick
    reset = factories.notification(other, factories.email_payload(
        to=["ada@example.org"], subject="reset"))
    enqueue_notification(str(reset.id), workspace=other.id)
    env = {**_worker_env(settings, fast_port),
           "HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS": "true"}  # loopback providers
    worker = subprocess.Popen([sys.executable, "-m", "engine.worker.worker"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        _wait(lambda: _delivered([*burst, str(reset.id)]) == BURST + 1, 60,
              "every message to be delivered")
    finally:
        _stop(worker)
    assert [m.rcpt_tos for m in fast.received] == [["ada@example.org"]]
    assert len(slow.received) == BURST
    # First come, first served, the reset would arrive after all eight, about 4 s in.
    third = slow.received[2].at
    assert fast.received[0].at < third, "the reset waited behind the other workspace's burst"
