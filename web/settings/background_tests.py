"""Settings' Send test buttons, off the request thread: the Email provider page's test
message and the Callbacks page's test event and replay.

A test waits on a server an Admin chose: a tarpit that accepts and never answers held a
request thread for the whole timeout, and eight tests at once held every thread of the
API and the web application (/healthz took 10-13 s, for all tenants). So a test runs on a
small pool of its own kind, at most ``total`` at once in a process and one at a time per
workspace (across processes: a Redis key), and the page asks for its answer by htmx
polling. The answer is kept in Redis for RESULT_SECONDS, under a random token bound to
the workspace.
"""

from __future__ import annotations

import contextlib
import json
import logging
import secrets
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from engine import runtime
from engine.database.db import database

RESULT_SECONDS = 600
log = logging.getLogger("herald.web")


class Busy(Exception):
    """No test can start now; the message says why and what to do."""


class TestRuns:
    """One kind of test: its pool, its per-process total and its per-workspace slot."""

    __test__ = False  # not a pytest class, whatever its name

    def __init__(self, kind: str, *, total: int, running_seconds: int, what: str) -> None:
        # ``running_seconds``: a test ends within its timeouts; the workspace's slot frees
        # itself after this even if the process died meanwhile.
        self.kind, self.total, self.running_seconds, self.what = (kind, total,
                                                                  running_seconds, what)
        self._prefix = f"herald:{kind}:"
        self._pool = ThreadPoolExecutor(max_workers=total, thread_name_prefix=f"herald-{kind}")
        self._lock = threading.Lock()
        self._in_flight = 0

    def _running_key(self, workspace_id: str) -> str:
        return f"{self._prefix}running:{workspace_id}"

    def start(self, workspace_id: str, work: Callable[[], dict[str, Any]]) -> str:
        """Run ``work`` (which returns the answer to show) on the pool; the token to poll.
        Raises Busy when this workspace has a test running, or the process has ``total``."""
        redis = runtime.redis()
        token = secrets.token_urlsafe(16)
        if not redis.set(self._running_key(workspace_id), token, nx=True,
                         ex=self.running_seconds):
            raise Busy(f"A {self.what} of this workspace is still running: wait for its "
                       "answer.")
        with self._lock:
            if self._in_flight >= self.total:
                redis.delete(self._running_key(workspace_id))
                raise Busy(f"Too many {self.what}s are running at once: try again in a "
                           "minute.")
            self._in_flight += 1
        redis.set(self._prefix + token, json.dumps({"workspace": workspace_id, "answer": None}),
                  ex=RESULT_SECONDS)
        self._pool.submit(self._run, token, workspace_id, work)
        return token

    def _run(self, token: str, workspace_id: str, work: Callable[[], dict[str, Any]]) -> None:
        try:
            database.connect(reuse_if_open=True)
            try:
                answer = work()
            except Exception:  # a bug must still end the test with an answer, never spin
                log.exception("the %s of workspace %s failed", self.what, workspace_id)
                answer = {"ok": False, "text": "the test could not run (see the server's log)"}
            finally:
                if not database.is_closed():
                    database.close()
            redis = runtime.redis()
            redis.set(self._prefix + token,
                      json.dumps({"workspace": workspace_id, "answer": answer}),
                      ex=RESULT_SECONDS)
            with contextlib.suppress(Exception):
                if (redis.get(self._running_key(workspace_id)) or b"").decode() == token:
                    redis.delete(self._running_key(workspace_id))
        finally:
            with self._lock:
                self._in_flight -= 1

    def answer(self, workspace_id: str, token: str) -> tuple[bool, dict[str, Any] | None]:
        """(known, answer): known is False for a token of another workspace or one no
        longer kept; the answer is None while the test runs."""
        raw = runtime.redis().get(self._prefix + token) if len(token) < 64 else None
        if raw is None:
            return False, None
        kept = json.loads(raw)
        if kept.get("workspace") != workspace_id:
            return False, None
        return True, kept.get("answer")


# Keys: herald:provider-test:* as before. A provider test ends within its provider
# timeouts (at most 30 s a step, a few steps, a few providers).
provider_tests = TestRuns("provider-test", total=4, running_seconds=300,
                          what="test of the provider")
# A callback attempt ends within the webhook timeouts (10 s to connect, 10 s to read).
callback_tests = TestRuns("callback-test", total=4, running_seconds=60,
                          what="callback test or replay")
