"""Where a delivery job meets the worker's delivery slots, without knowing the process.

The slots belong to the worker process (engine/worker/handoff.py): it installs them with
``use`` when it starts and removes them when it stops. A job asks only the three questions
below; with no slots installed (the fork-per-job worker, tests, a burst run without them)
the job delivers inside itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class DeliveryThread(Protocol):
    """What a job asks of the slots that deliver for it."""

    def hand(self, key: str, work: Callable[[], Any],
             workspace: str | None = None) -> None: ...

    def take(self, key: str) -> bool: ...

    def waiting(self) -> bool: ...


_thread: DeliveryThread | None = None


def use(thread: DeliveryThread | None) -> DeliveryThread | None:
    """Install ``thread`` (None: none) for this process's jobs; returns the one before."""
    global _thread
    previous, _thread = _thread, thread
    return previous


def installed() -> DeliveryThread | None:
    return _thread


def hand(key: str, work: Callable[[], Any], workspace: str | None = None) -> None:
    """Deliver ``work`` for the job ``key`` (of ``workspace``) in a slot. Does nothing
    unless slots are installed."""
    thread = _thread
    if thread is not None:
        thread.hand(key, work, workspace)


def waiting() -> bool:
    """Whether another delivery waits for a slot (False without the slots)."""
    thread = _thread
    return thread is not None and thread.waiting()


def taken(key: str) -> bool:
    """For the job ``key``: True when its delivery was handed to the slots (the job returns
    at once); False when the job must deliver itself."""
    thread = _thread
    return thread.take(key) if thread is not None else False
