"""`herald db wait` and `herald db upgrade --wait`: what lets a container started beside the
one-off migration (deploy/compose.yaml, a Kubernetes init container) begin only once the
schema is this release's, and a migration start before its database answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from engine.database.migrations import MIGRATIONS
from engine.queue.embedded_redis import free_port
from tests.conftest import TEST_SECRET_KEY


def _herald(database_url: str, cwd, *args: str, background: bool = False):
    env = {**os.environ, "HERALD_ENV": "test", "HERALD_DATABASE_URL": database_url,
           "HERALD_SECRET_KEY": TEST_SECRET_KEY}
    command = [sys.executable, "-m", "cli", *args]
    if background:
        return subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=60)


def test_db_wait_on_a_database_without_the_schema_gives_up_naming_the_upgrade(tmp_path):
    url = f"sqlite:///{tmp_path / 'fresh.sqlite3'}"
    proc = _herald(url, tmp_path, "db", "wait", "--timeout", "0.5")
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == (f"herald: the schema is at step 0 of {len(MIGRATIONS)} after 0.5 s: "
                           "run `herald db upgrade`\n")


def test_db_wait_returns_once_the_upgrade_has_run(tmp_path):
    url = f"sqlite:///{tmp_path / 'later.sqlite3'}"
    waiting = _herald(url, tmp_path, "db", "wait", "--timeout", "60", background=True)
    try:
        # Still waiting while nothing has upgraded (it would have exited by now otherwise).
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            assert waiting.poll() is None, waiting.stderr.read()
            time.sleep(0.1)
        upgraded = _herald(url, tmp_path, "db", "upgrade")
        assert upgraded.returncode == 0, upgraded.stderr
        out, err = waiting.communicate(timeout=30)
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.communicate()
    assert waiting.returncode == 0, err
    assert json.loads(out) == {"schema": len(MIGRATIONS)}


def test_db_upgrade_wait_retries_an_unreachable_database_then_says_so(tmp_path):
    url = f"postgresql://herald:pw-not-shown@127.0.0.1:{free_port()}/herald"
    proc = _herald(url, tmp_path, "db", "upgrade", "--wait", "1")
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("herald: cannot reach the database: ")
    assert proc.stderr.count("\n") == 1 and "pw-not-shown" not in proc.stderr


def test_db_upgrade_wait_upgrades_a_reachable_database_at_once(tmp_path):
    url = f"sqlite:///{tmp_path / 'now.sqlite3'}"
    proc = _herald(url, tmp_path, "db", "upgrade", "--wait", "30")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"schema": {"from": 0, "to": len(MIGRATIONS)}}
