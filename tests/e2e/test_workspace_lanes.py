"""A real worker and real SMTP servers: a workspace whose own provider answers slowly does
not hold another workspace's mail behind its burst (issue 37; docs/delivery.md, "Queues and
fairness"), nor behind its hanging relay (deliveries in flight, each workspace its share)."""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import threading

import pytest

from engine.database.models import DeliveryAttempt, Notification
from engine.delivery.queue import enqueue_notification
from engine.queue.embedded_redis import free_port
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


class _Tarpit:
    """A relay that accepts every connection and never says a word."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=64)
        self.port = self.listener.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                self.held.append(self.listener.accept()[0])

    def close(self) -> None:
        self.listener.close()
        for conn in self.held:
            conn.close()


@pytest.mark.slow
def test_a_hanging_relay_holds_only_its_own_workspaces_share_of_the_slots(settings, servers):
    _, (fast_port, fast) = servers
    tarpit = _Tarpit()
    hung = factories.workspace(email_provider=json.dumps(
        {"plugin": "smtp", "url": f"smtp://127.0.0.1:{tarpit.port}?tls=none&timeout=15"}))
    stuck = [str(factories.notification(hung, factories.email_payload(
        to=[f"reader{i}@example.net"])).id) for i in range(20)]
    for nid in stuck:
        enqueue_notification(nid, workspace=hung.id)
    others = []
    for i in range(3):  # three other workspaces, two emails each, queued behind the 20
        ws = factories.workspace()
        for j in range(2):
            n = factories.notification(ws, factories.email_payload(
                to=[f"user{i}.{j}@example.org"], subject="reset"))
            enqueue_notification(str(n.id), workspace=ws.id)
            others.append(str(n.id))
    env = {**_worker_env(settings, fast_port), "HERALD_WORKSPACE_CONCURRENCY": "2",
           "HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS": "true"}  # loopback providers
    worker = subprocess.Popen([sys.executable, "-m", "engine.worker.worker",
                               "--concurrency", "8"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        _wait(lambda: _delivered(others) == len(others), 60, "the other workspaces' mail")
        # Every other workspace's mail arrived while the hanging relay's first deliveries
        # were still waiting for it: none of them has ended yet.
        assert DeliveryAttempt.select().where(DeliveryAttempt.notification.in_(stuck)).count() == 0
        sending = Notification.select().where(Notification.id.in_(stuck),
                                              Notification.status == "sending").count()
        assert 1 <= sending <= 2, "the hanging workspace held more than its share"
        worker.send_signal(signal.SIGTERM)
        # It finishes what it has in flight (each within its 15 s deadline), then exits.
        assert worker.wait(timeout=60) == 0
    finally:
        _stop(worker)
        tarpit.close()
    assert sorted(r for m in fast.received for r in m.rcpt_tos) == sorted(
        f"user{i}.{j}@example.org" for i in range(3) for j in range(2))
    ended = list(DeliveryAttempt.select().where(DeliveryAttempt.notification.in_(stuck)))
    assert 1 <= len(ended) <= 2
    assert all(a.outcome == "transient" and a.error.startswith(
        f"no answer came from SMTP server 127.0.0.1:{tarpit.port} within 15 s")
        for a in ended), [a.error for a in ended]
