"""A provider's ``rate=R`` holds across worker processes: two real workers, 32 deliveries in
flight each, share one pace kept in Redis (engine/delivery/pacing.py)."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from engine.delivery.pacing import PacedProvider, rate_of
from engine.delivery.queue import enqueue_notification
from engine.queue.embedded_redis import free_port
from tests import factories
from tests.e2e.test_worker_durability import _delivered, _stop, _wait, _worker_env
from tests.support.smtp_server import start_smtp

RATE = 5
SENDS = 16


@pytest.fixture
def smtp_server():
    controller, handler = start_smtp(free_port())
    yield controller.port, handler
    controller.stop()


@pytest.mark.slow
def test_a_providers_rate_holds_across_two_worker_processes(settings, smtp_server):
    port, handler = smtp_server
    ids = []
    spaces = [factories.workspace() for _ in range(4)]  # no workspace's share paces them
    for i in range(SENDS):
        ws = spaces[i % 4]
        n = factories.notification(ws, factories.email_payload(to=[f"r{i}@example.net"]))
        enqueue_notification(str(n.id), workspace=ws.id)
        ids.append(str(n.id))
    # No worker is killed here, so no row needs the reconciler: the durability tests' 2 s
    # grace would let a loaded machine (a lease written late) see a paced send as stranded
    # and send it twice, which is what that grace means, not what this test is about.
    env = {**_worker_env(settings, port),
           "HERALD_EMAIL_PROVIDER": f"smtp://127.0.0.1:{port}?tls=none&rate={RATE}",
           "HERALD_RECONCILE_AFTER_SECONDS": "60"}
    workers = [subprocess.Popen([sys.executable, "-m", "engine.worker.worker"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True) for _ in range(2)]
    try:
        _wait(lambda: _delivered(ids) == SENDS, 90, "every send delivered")
    finally:
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
        for worker in workers:
            _stop(worker)
    arrived = sorted(m.at for m in handler.received)
    assert len(arrived) == SENDS
    # Paced, the 16 messages are 15 intervals of 0.2 s apart from first to last, whichever
    # process sent each; unpaced, 64 slots send them all at once. A slow machine only
    # spreads them further; the margin is for the first message's own delay.
    assert arrived[-1] - arrived[0] >= 0.75 * (SENDS - 1) / RATE


def test_a_rate_is_a_positive_number():
    assert rate_of("smtp://relay.test:25?tls=none&rate=14") == 14
    assert rate_of("smtp://relay.test:25?tls=none") is None
    for bad in ("0", "-1", "fast", "inf"):
        with pytest.raises(ValueError, match="rate"):
            rate_of(f"smtp://relay.test:25?rate={bad}")


def test_a_paced_provider_keeps_what_the_lanes_read():
    class Provider:
        max_concurrency = 4
        herald_scheme = "smtp"

        def send(self, message):
            return message

    paced = PacedProvider(Provider(), "herald:pace:test", 5)
    assert (paced.max_concurrency, paced.herald_scheme) == (4, "smtp")
    assert not hasattr(paced, "send_many")


def test_a_message_whose_turn_is_too_far_off_is_retried_later(settings):
    from engine.plugins.contracts import TransientError

    class Provider:
        def __init__(self) -> None:
            self.sent: list[str] = []

        def send(self, message):
            self.sent.append(message)
            return message

    inner = Provider()
    paced = PacedProvider(inner, "herald:pace:slow-test", 0.01)  # one message in 100 s
    paced.send("first")
    with pytest.raises(TransientError) as raised:
        paced.send("second")
    assert raised.value.retry_after is not None and raised.value.retry_after > 30
    assert inner.sent == ["first"]
