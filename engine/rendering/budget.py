"""One render budget per request, shared by every part, recipient and personalisation.

Each render also keeps its own bound (runtime.RENDER_DEADLINE_SECONDS); a request opens a
budget around all its renders, so three hostile parts cost one budget, not three deadlines
(a preview of three parts once ran 3 x 2 s). The budget is a context variable: each server
thread's request has its own, and code outside a request (the worker) has none.
"""

from __future__ import annotations

import time
from contextvars import ContextVar

# The longest a rendered part may be (spec 2.3); never truncated: a RenderError past it.
MAX_PART_CHARS = 1_048_576

_deadline: ContextVar[float | None] = ContextVar("herald_render_deadline", default=None)


class render_budget:  # named as the function it was: `with render_budget(s):`
    """Every render inside shares ``seconds`` of wall time in all (and never outlasts a
    budget already open around it). A class, not a generator under ``contextmanager``,
    whose generator and wrapper cost a send about 10,000 instructions."""

    __slots__ = ("_seconds", "_token")

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds

    def __enter__(self) -> None:
        self._token = _deadline.set(deadline_within(self._seconds))

    def __exit__(self, *_exc: object) -> None:
        _deadline.reset(self._token)


def deadline_within(seconds: float) -> float:
    """The monotonic deadline of a render bounded by ``seconds``, and by the budget."""
    own = time.monotonic() + seconds
    budget = _deadline.get()
    return own if budget is None else min(own, budget)


def seconds_left(seconds: float) -> float:
    """``seconds``, or what is left of the budget when that is less (never negative)."""
    return max(0.0, deadline_within(seconds) - time.monotonic())
