"""`herald worker` retries a failed callback when it is due, every time: a receiver that
answers 500 once, then 200, with the backoff 1,1,1, gets its second attempt in seconds
(the sweep, which would otherwise find it, waits a minute)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from engine.callbacks import recording, targets
from engine.callbacks.recording import Outcome
from engine.database.models import utcnow
from engine.database.models.callbacks import Callback
from tests import factories
from tests.conftest import TEST_SECRET_KEY
from tests.support.https_receiver import Scripted
from tests.support.processes import stop_group, wait_for

pytestmark = pytest.mark.slow
RETRIES = 4  # each missed about half the time before the retry's second was rounded up


@pytest.fixture
def worker(settings, ca_file, tmp_path):
    env = {**os.environ, "HERALD_ENV": "test", "HERALD_DATABASE_URL": settings.database_url,
           "HERALD_REDIS_URL": settings.redis_url, "HERALD_SECRET_KEY": TEST_SECRET_KEY,
           "HERALD_EMAIL_PROVIDER": "inbox://", "HERALD_WEBHOOK_BACKOFF": "1,1,1",
           "HERALD_WEBHOOK_ALLOW_PRIVATE_DESTINATIONS": "true",
           "REQUESTS_CA_BUNDLE": ca_file, "HERALD_RECONCILE_AFTER_SECONDS": "600"}
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "cli", "worker"], env=env,
                                   stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    yield lambda: log.read_text(errors="replace")
    stop_group(process)


def test_a_callback_answered_500_once_is_retried_each_time(settings, receiver, ca_file,
                                                           monkeypatch, worker):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", ca_file)
    ws = factories.workspace()
    targets.set_target(ws, receiver.url("/cb", "localhost"))
    for number in range(RETRIES):
        receiver.script["/cb"] = [Scripted(status=500), Scripted(status=200)]
        notification = factories.notification(ws, factories.email_payload())
        recording.record(notification, [Outcome("delivered", "ada@example.net", utcnow())])
        row = Callback.select().order_by(Callback.id.desc()).get()

        def delivered(row=row) -> bool:
            return Callback.get_by_id(row.id).status == "delivered"

        # 20 s: twenty times the backoff, a third of the sweep's grace.
        wait_for(delivered, 20, f"callback {number + 1} of {RETRIES} to be retried",
                 lambda row=row: f"{Callback.get_by_id(row.id).__data__} {worker()}")
        assert Callback.get_by_id(row.id).attempts == 2
