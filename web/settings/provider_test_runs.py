"""The Email provider page's Send test, off the request thread.

A test waits on a server an Admin chose: a tarpit that accepts and never answers held a
request thread for the whole timeout, and eight tests at once held every thread of the
API and the web application (/healthz took 13 s, for all tenants). So a test runs on a
small pool of its own, at most TOTAL at once in a process and one at a time per workspace
(across processes: a Redis key), and the page asks for its answer by htmx polling. The
answer is kept in Redis for RESULT_SECONDS, under a random token bound to the workspace.
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
from engine.store.db import database

TOTAL = 4  # tests in flight in one process
RESULT_SECONDS = 600
# A test ends within its provider timeouts (at most 30 s a step, a few steps, a few
# providers); the workspace's slot frees itself after this even if the process died.
RUNNING_SECONDS = 300
_PREFIX = "herald:provider-test:"

log = logging.getLogger("herald.web")
_pool = ThreadPoolExecutor(max_workers=TOTAL, thread_name_prefix="herald-provider-test")
_lock = threading.Lock()
_in_flight = 0


class Busy(Exception):
    """No test can start now; the message says why and what to do."""


def _running_key(workspace_id: str) -> str:
    return f"{_PREFIX}running:{workspace_id}"


def start(workspace_id: str, work: Callable[[], dict[str, Any]]) -> str:
    """Run ``work`` (which returns the answer to show) on the pool; the token to poll.
    Raises Busy when this workspace has a test running, or the process has TOTAL."""
    global _in_flight
    redis = runtime.redis()
    token = secrets.token_urlsafe(16)
    if not redis.set(_running_key(workspace_id), token, nx=True, ex=RUNNING_SECONDS):
        raise Busy("A test of this workspace's provider is still running: wait for its "
                   "answer.")
    with _lock:
        if _in_flight >= TOTAL:
            redis.delete(_running_key(workspace_id))
            raise Busy("Too many provider tests are running at once: try again in a minute.")
        _in_flight += 1
    redis.set(_PREFIX + token, json.dumps({"workspace": workspace_id, "answer": None}),
              ex=RESULT_SECONDS)
    _pool.submit(_run, token, workspace_id, work)
    return token


def _run(token: str, workspace_id: str, work: Callable[[], dict[str, Any]]) -> None:
    global _in_flight
    try:
        database.connect(reuse_if_open=True)
        try:
            answer = work()
        except Exception:  # a bug must still end the test with an answer, never spin
            log.exception("the provider test of workspace %s failed", workspace_id)
            answer = {"ok": False, "text": "the test could not run (see the server's log)"}
        finally:
            if not database.is_closed():
                database.close()
        redis = runtime.redis()
        redis.set(_PREFIX + token, json.dumps({"workspace": workspace_id, "answer": answer}),
                  ex=RESULT_SECONDS)
        with contextlib.suppress(Exception):
            if (redis.get(_running_key(workspace_id)) or b"").decode() == token:
                redis.delete(_running_key(workspace_id))
    finally:
        with _lock:
            _in_flight -= 1


def answer(workspace_id: str, token: str) -> tuple[bool, dict[str, Any] | None]:
    """(known, answer): known is False for a token of another workspace or one no longer
    kept; the answer is None while the test runs."""
    raw = runtime.redis().get(_PREFIX + token) if len(token) < 64 else None
    if raw is None:
        return False, None
    kept = json.loads(raw)
    if kept.get("workspace") != workspace_id:
        return False, None
    return True, kept.get("answer")
