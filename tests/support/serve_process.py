"""`herald serve` as a process of its own, on a free port, for tests that need a real
gunicorn between them and the app (connections closed, bodies left unread, memory)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests

from engine.queue.embedded_redis import free_port
from tests.conftest import TEST_SECRET_KEY


@contextmanager
def herald_serve(settings, home: Path) -> Iterator[tuple[subprocess.Popen, int]]:
    """One gunicorn worker on the test's database and Redis, answering before it is yielded
    (the process and its port); SIGTERM to its whole group after."""
    port = free_port()
    env = {**os.environ, "HERALD_ENV": "test", "HERALD_DATABASE_URL": settings.database_url,
           "HERALD_REDIS_URL": settings.redis_url, "HERALD_SECRET_KEY": TEST_SECRET_KEY,
           "HOME": str(home), "TMPDIR": str(home)}
    proc = subprocess.Popen([sys.executable, "-m", "cli", "serve", "--host", "127.0.0.1",
                             "--port", str(port), "--workers", "1"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                requests.get(f"http://127.0.0.1:{port}/", timeout=5)
                break
            except requests.ConnectionError:
                assert proc.poll() is None and time.monotonic() < deadline, "no answer"
                time.sleep(0.1)  # polling for the port to open, bounded by the deadline
        yield proc, port
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
