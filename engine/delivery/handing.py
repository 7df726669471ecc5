"""Where a delivery job meets the worker's delivery thread, without knowing the process.

The thread belongs to the worker process (engine/worker/handoff.py): it installs one with
``use`` when it starts and removes it when it stops. A job asks only the three questions
below; with no thread installed (the fork-per-job worker, tests, a burst run without it)
the job delivers inside itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class DeliveryThread(Protocol):
    """What a job asks of the thread that delivers for it."""

    def hand(self, key: str, work: Callable[[], Any]) -> None: ...

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


def hand(key: str, work: Callable[[], Any]) -> None:
    """Deliver ``work`` for the job ``key`` on the thread, after the deliveries before it.
    Does nothing unless a thread is installed."""
    thread = _thread
    if thread is not None:
        thread.hand(key, work)


def waiting() -> bool:
    """Whether another delivery waits for the thread (False without the thread)."""
    thread = _thread
    return thread is not None and thread.waiting()


def taken(key: str) -> bool:
    """For the job ``key``: True when its delivery was handed to the thread (the job returns
    at once); False when the job must deliver itself, which it then does alone."""
    thread = _thread
    return thread.take(key) if thread is not None else False
