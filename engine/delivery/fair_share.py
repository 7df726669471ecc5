"""A worker's time shared fairly: a fan-out yields the worker to the deliveries waiting.

A Marketing send to 1,000 recipients is minutes of sending; one job for all of it held the
worker's delivery thread the whole time, and another workspace's password reset waited
behind it (issue #30, finding 4). Now a fan-out sends in slices: once it has sent for
``SLICE_SECONDS`` and another delivery waits for the thread (engine/worker/handoff.py),
it takes no more messages, records the outcomes of those in flight, queues its row again
as the same attempt and enqueues its job at the back of its queue. The delivery waiting
runs next; the fan-out's next slice skips every recipient already settled (the plan reads
them, as after a crash). So a delivery waits at most about one slice for a fan-out, and
fan-outs of several workspaces take turns (docs/delivery.md, "Queues and fairness").

Only with the delivery slots (``herald worker`` without ``--fork``): without them nothing is
known to wait, and a fan-out runs to its end as before.
"""

from __future__ import annotations

import threading
import time

from engine.database import notification_store
from engine.database.models import Notification
from engine.delivery import handing
from engine.delivery.outcomes import Outcomes
from engine.delivery.queue import enqueue_notification, is_bulk

SLICE_SECONDS = 0.2
YIELDED = "yielded"


class Slice:
    """One job's share of a fan-out: ``stop`` is set once it should end."""

    def __init__(self, messages: int) -> None:
        self.stop = threading.Event()
        self.started = time.monotonic()
        self.fan_out = messages > 1

    def after(self, outcomes: Outcomes) -> None:
        """After each outcome: end the slice when it is used up and another delivery waits
        (not after a transient refusal: that attempt ends, and its retry waits its turn)."""
        if (self.fan_out and outcomes.left > 0 and outcomes.transient is None
                and not self.stop.is_set()
                and time.monotonic() - self.started >= SLICE_SECONDS and handing.waiting()):
            self.stop.set()

    def ended_early(self, outcomes: Outcomes) -> bool:
        """Whether messages were left untaken: the fan-out yields instead of ending."""
        return self.stop.is_set() and outcomes.left > 0


def yield_worker(notification: Notification, outcomes: Outcomes) -> str:
    """Record this slice's outcomes, queue the row again and its job at the queue's back."""
    outcomes.save_bounces()
    if notification_store.record_pause(notification, outcomes.attempts[outcomes.saved:]):
        enqueue_notification(str(notification.id),
                             bulk=is_bulk(notification.channel, notification.payload),
                             workspace=notification.workspace_id)
    return YIELDED
