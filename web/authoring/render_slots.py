"""How many of the editor's renders (previews, test sends) one process runs at once.

Each is bounded by the render budget, but eight hostile previews at once (a 1 MB body, 8 KB
sample values) still held eight server threads and starved /healthz and every tenant's
pages. A request takes one of RENDERS_AT_ONCE slots before it reads its body; with none
free within WAIT_SECONDS (a keystroke's preview takes a few milliseconds) it gets a 429 at
once, so the server's threads stay free for everyone else's requests. Eight attackers
waiting a second each held all eight threads of `herald serve`; waiting a tenth of a second
still put /healthz's p99 at 360 ms in `python -m bench attack`, 20 ms brings it near 100.
/healthz no longer waits for these threads (cli/health_worker.py); the slots still keep
them, and the interpreter lock, for every tenant's pages.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from flask import abort, make_response

from web.core import errors

RENDERS_AT_ONCE = 2
WAIT_SECONDS = 0.02
slots = threading.BoundedSemaphore(RENDERS_AT_ONCE)


@contextmanager
def render_slot() -> Iterator[None]:
    """One of the process's render slots for the request, or a 429 that says why."""
    if not slots.acquire(timeout=WAIT_SECONDS):
        body, status = errors.page(429, "Too many previews and test sends are running at "
                                        "once: try again in a moment.")
        abort(make_response(body, status, {"Retry-After": "1"}))
    try:
        yield
    finally:
        slots.release()
