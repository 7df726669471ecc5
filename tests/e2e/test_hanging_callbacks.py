"""A workspace whose callback receiver accepts and never answers holds nothing of another
workspace in `herald worker`: the worker takes each callbacks job as it takes a delivery
job and runs its pass on a pass slot of its own, so while the first pass waits on its
receiver the other workspace's notification is delivered and its callback sent."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from engine.callbacks import recording, targets
from engine.callbacks.recording import Outcome
from engine.database.models import Notification, utcnow
from engine.database.models.callbacks import Callback
from engine.delivery.queue import enqueue_notification
from tests import factories
from tests.conftest import TEST_SECRET_KEY
from tests.support.https_receiver import Scripted
from tests.support.processes import stop_group, wait_for

pytestmark = pytest.mark.slow


@pytest.fixture
def worker(settings, ca_file, tmp_path):
    env = {**os.environ, "HERALD_ENV": "test", "HERALD_DATABASE_URL": settings.database_url,
           "HERALD_REDIS_URL": settings.redis_url, "HERALD_SECRET_KEY": TEST_SECRET_KEY,
           "HERALD_EMAIL_PROVIDER": "inbox://",
           "HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS": "true",
           "REQUESTS_CA_BUNDLE": ca_file, "HERALD_RECONCILE_AFTER_SECONDS": "600"}
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        # Two delivery slots and two pass slots: the hanging pass takes one of the latter.
        process = subprocess.Popen([sys.executable, "-m", "cli", "worker", "--concurrency", "2"],
                                   env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    yield lambda: log.read_text(errors="replace")
    stop_group(process)


def test_a_hanging_receiver_holds_no_other_workspaces_delivery_or_callback(
        settings, receiver, ca_file, monkeypatch, worker):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", ca_file)
    answer = threading.Event()
    receiver.script["/hangs"] = [Scripted(hold=answer)]
    hanging, other = factories.workspace(), factories.workspace()
    targets.set_target(hanging, receiver.url("/hangs", "localhost"))
    targets.set_target(other, receiver.url("/answers", "localhost"))
    try:
        held = factories.notification(hanging, factories.email_payload(), status="delivered")
        recording.record(held, [Outcome("delivered", "ada@example.net", utcnow())])

        def arrived(path: str) -> bool:
            return any(r.path == path for r in receiver.received)

        wait_for(lambda: arrived("/hangs"), 30, "the hanging receiver's request", worker)
        sent = factories.notification(other, factories.email_payload())
        enqueue_notification(str(sent.id), workspace=other.id)
        wait_for(lambda: arrived("/answers"), 30, "the other workspace's callback", worker)
        # The hanging pass is still in its attempt (the webhook timeout is 10 s): what the
        # other workspace got did not wait for it.
        (waiting,) = Callback.select().where(Callback.workspace == hanging.id)
        assert (waiting.status, waiting.attempts) == ("pending", 0)
        assert Notification.get_by_id(sent.id).status == "delivered"
        (answered,) = Callback.select().where(Callback.workspace == other.id)
        wait_for(lambda: Callback.get_by_id(answered.id).status == "delivered", 30,
                 "the other workspace's callback to be recorded", worker)
    finally:
        answer.set()
