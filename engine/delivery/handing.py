"""Whether another delivery waits for the worker's delivery slots, asked by a delivery
without knowing the process.

The slots belong to the worker process (engine/worker/handoff.py): it installs them with
``use`` when it starts and removes them when it stops, and it calls each delivery itself.
A long fan-out asks only ``waiting`` (engine/delivery/fair_share.py), to know when to yield
its slot; with no slots installed (the fork-per-job worker, tests, a burst run without
them) nothing is known to wait.
"""

from __future__ import annotations

from typing import Protocol


class DeliveryThread(Protocol):
    """What a delivery asks of the slots it runs in."""

    def waiting(self) -> bool: ...


_thread: DeliveryThread | None = None


def use(thread: DeliveryThread | None) -> DeliveryThread | None:
    """Install ``thread`` (None: none) for this process's deliveries; returns the one before."""
    global _thread
    previous, _thread = _thread, thread
    return previous


def installed() -> DeliveryThread | None:
    return _thread


def waiting() -> bool:
    """Whether another delivery waits for a slot (False without the slots)."""
    thread = _thread
    return thread is not None and thread.waiting()
