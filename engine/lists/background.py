"""The pool that checks uploaded files: CHECK_THREADS threads a process, so the rows of at
most that many files are in memory at once however many arrive, and no request thread
waits on a check longer than it chooses to. Each task opens its own database connection
(peewee's are per thread) and closes it when done."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from engine.database.db import database

log = logging.getLogger("herald.lists")
CHECK_THREADS = 1
_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_futures: dict[str, Future] = {}


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=CHECK_THREADS,
                                       thread_name_prefix="herald-list-check")
        return _pool


def _run(task: Callable[..., None], *args: Any) -> None:
    database.connect(reuse_if_open=True)
    try:
        task(*args)
    finally:
        database.close()


def submit(task: Callable[..., None], key: str, *args: Any) -> None:
    """Run ``task(key, *args)`` in the pool; ``wait(key)`` waits for it."""
    future = _executor().submit(_run, task, key, *args)
    with _lock:
        _futures[key] = future
    future.add_done_callback(lambda _: _forget(key))


def _forget(key: str) -> None:
    with _lock:
        _futures.pop(key, None)


def wait(key: str, seconds: float) -> bool:
    """Wait up to ``seconds`` for the task of ``key`` in this process: True when it ended
    (or is not this process's)."""
    with _lock:
        future = _futures.get(key)
    if future is None:
        return True
    try:
        future.result(timeout=seconds)
    except TimeoutError:
        return False
    except Exception:  # the task logs its own failure
        return True
    return True
