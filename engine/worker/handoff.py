"""The worker's delivery slots: many deliveries in flight per process, each workspace bounded.

In ``herald worker`` (without ``--fork``) RQ runs its loop on the main thread, but each
delivery (the claim, the render, the send, the outcome's commit and its plugin events)
runs on one of ``--concurrency`` delivery threads, the slots:

- **Handed over at dequeue.** The worker's queue class takes a job only when a slot is free
  (``room``) and, the moment RQ dequeues a delivery job, hands its notification to the
  slots (``hand_delivery``), which call the delivery (engine/delivery/jobs.py) directly.
  The worker class then settles the job without RQ's execution (``taken``): RQ's loop
  never waits for a send. It heartbeats, checks the scheduler and takes the next job
  while deliveries are in flight. Delivery waits on the network (a relay's 200 ms a
  message), so threads, which the database and provider code already suit, hold many at
  a cost of a stack each.
- **Each workspace its share.** At most ``per_workspace`` deliveries of one workspace are in
  flight in this process (``HERALD_WORKSPACE_CONCURRENCY``, by default a quarter of the
  slots); the queue's take passes a full workspace's turn (``full``), so its jobs stay in
  Redis for another process, and a workspace whose relay hangs holds only its own slots.
- **An outcome before its slot is free.** A delivery commits its outcome before its slot
  is counted free, so a process never has more than ``concurrency`` messages sent and not
  yet recorded: what a crash may send twice (docs/delivery.md).
- **Leases.** Each delivery in flight has a lease in Redis (engine/worker/inflight.py): the
  reconciler never takes a live delivery's row for a crashed one.
- **Errors.** The job is settled when its delivery fails (the database or Redis gone; any
  other exception the delivery records as an outcome, engine/delivery/jobs.py): the error
  is logged with the notification id, and the row, still ``queued`` or ``sending``, waits
  for the reconciler, as after a crash.
- **Waiting** (``waiting``): whether a delivery waits for a slot (handed and not started,
  or RQ's loop waiting for room); a long fan-out asks it to know when to yield its slot
  (engine/delivery/fair_share.py).
- **Callback passes** (engine/callbacks/jobs.py): a callbacks job is taken the same way,
  its workspace's pass handed over at dequeue (``hand_job``) and the job settled without
  RQ's execution, but on pass slots of their own (``passes``, as many as the delivery
  slots): a pass never takes a delivery's slot, so a receiver that hangs holds no
  delivery, and while every pass slot is busy the take leaves the callbacks queue to
  another process (``serving``). A pass ends within ``PASS_SECONDS`` of its last attempt
  and enqueues the rest, so a busy workspace yields its slot to others.
- **Shutdown** (SIGTERM, the end of a burst): RQ's loop takes no more jobs, and ``close``
  waits for every delivery and pass in flight, each bounded by its deadline.

Where RQ runs a delivery or callbacks job itself (the fork-per-job worker, a job the slots
did not take, tests) the job delivers or sends inside it, with RQ's own records of it. A
delivery meets the slots only through engine/delivery/handing.py (whether another waits),
which this module installs them in: the delivery knows nothing of the process.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rq.job import Job

from engine.callbacks import jobs as callback_jobs
from engine.callbacks.queue import JOB_FUNCTION as CALLBACKS_JOB
from engine.database.db import database, release_connection
from engine.delivery import handing
from engine.delivery.jobs import deliver_notification
from engine.delivery.queue import JOB_FUNCTION as DELIVERY_JOB
from engine.observability.outages import dependency_of
from engine.queue.queueing import CALLBACK_QUEUE_NAME
from engine.worker.database_wait import wait_for_database
from engine.worker.inflight import Leases

log = logging.getLogger("herald.delivery")
callbacks_log = logging.getLogger("herald.callbacks")
DEFAULT_CONCURRENCY = 32
CALLBACKS_QUEUE_KEY = "rq:queue:" + CALLBACK_QUEUE_NAME


def workspace_share(concurrency: int, setting: int | None = None) -> int:
    """Most deliveries of one workspace in flight: the setting, else a quarter, at least 1."""
    share = setting if setting else concurrency // 4
    return max(1, min(share, concurrency))


class DeliverySlots:
    """``concurrency`` delivery threads and ``passes`` callback pass threads; the deliveries
    and passes handed over and not yet ended."""

    def __init__(self, concurrency: int = 1, per_workspace: int | None = None,
                 passes: int | None = None) -> None:
        self.concurrency = max(1, concurrency)
        self.per_workspace = per_workspace or self.concurrency
        self.passes = max(1, passes or self.concurrency)
        self._pool = ThreadPoolExecutor(max_workers=self.concurrency,
                                        thread_name_prefix="herald-delivery")
        # Apart: a pass that waits on a hanging receiver never holds a delivery's thread.
        self._pass_pool = ThreadPoolExecutor(max_workers=self.passes,
                                             thread_name_prefix="herald-callbacks")
        self._changed = threading.Condition()
        self._busy = 0  # handed over and not ended
        self._passing = 0  # callback passes handed over and not ended
        self._not_started = 0
        self._wanting = 0  # RQ's loop waits for room
        self._by_workspace: Counter[str] = Counter()
        self._handed: set[str] = set()  # handed over, their job not run yet
        self.leases = Leases()
        self.leases.start()

    def in_flight(self) -> int:
        return self._busy

    def waiting(self) -> bool:
        return self._not_started > 0 or self._wanting > 0

    def full(self) -> list[str]:
        """The workspaces at their most in flight here: the queue passes their turn."""
        with self._changed:
            return [ws for ws, n in self._by_workspace.items() if n >= self.per_workspace]

    def room(self, timeout: float | None) -> bool:
        """Wait until a slot is free (at most ``timeout`` s; None: as long as it takes)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._changed:
            self._wanting += 1
            try:
                while self._busy >= self.concurrency:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        return False
                    self._changed.wait(left)
                return True
            finally:
                self._wanting -= 1

    def serving(self, queue_keys: Sequence[str]) -> list[str]:
        """The queues to take from: not the callbacks queue while every pass slot is busy
        (its jobs wait in Redis for a slot here or another process)."""
        if self._passing < self.passes:
            return list(queue_keys)
        return [key for key in queue_keys if key != CALLBACKS_QUEUE_KEY]

    def wait_for_change(self, timeout: float) -> None:
        """Wait until a delivery ends (a full workspace may have room again)."""
        with self._changed:
            self._changed.wait(timeout)

    def hand(self, key: str, work: Callable[[], Any], workspace: str | None = None) -> None:
        with self._changed:
            self._busy += 1
            self._not_started += 1
            if workspace is not None:
                self._by_workspace[workspace] += 1
            self._handed.add(key)
        self.leases.add(key)
        self._pool.submit(self._run, key, work, workspace)

    def hand_pass(self, key: str, work: Callable[[], Any]) -> None:
        """Run a callback pass (``work``) for the job ``key`` on a pass slot."""
        with self._changed:
            self._passing += 1
            self._handed.add(key)
        self._pass_pool.submit(self._run_pass, key, work)

    def settle(self, key: str) -> None:
        """The job ``key`` is settled without work of its own."""
        with self._changed:
            self._handed.add(key)

    def take(self, key: str) -> bool:
        """For the job ``key``: True when its delivery was handed over (the job returns)."""
        with self._changed:
            if key in self._handed:
                self._handed.discard(key)
                return True
        return False

    def _run(self, key: str, work: Callable[[], Any], workspace: str | None) -> None:
        with self._changed:
            self._not_started -= 1
        try:
            _delivering(key, work)
        finally:
            self.leases.drop(key)
            with self._changed:
                self._busy -= 1
                if workspace is not None:
                    self._by_workspace[workspace] -= 1
                    if self._by_workspace[workspace] <= 0:
                        del self._by_workspace[workspace]
                self._changed.notify_all()

    def _run_pass(self, key: str, work: Callable[[], Any]) -> None:
        try:
            _passing(key, work)
        finally:
            with self._changed:
                self._passing -= 1
                self._changed.notify_all()

    def close(self) -> None:
        """Finish every delivery and pass handed over, then release the threads."""
        self._pool.shutdown(wait=True)
        self._pass_pool.shutdown(wait=True)
        self.leases.stop()


def _delivering(key: str, work: Callable[[], Any]) -> None:
    while True:
        try:
            database.connect(reuse_if_open=True)  # this thread's own connection
            work()
            return
        except Exception as err:
            if dependency_of(err) == "database" and wait_for_database(err):
                continue  # back: deliver it now rather than after the reconciler's grace
            log.exception("delivering notification %s failed (a row left queued or sending "
                          "waits for the reconciler)", key)
            return
        finally:
            release_connection()  # a pooled connection goes back for the other slots


def _passing(key: str, work: Callable[[], Any]) -> None:
    try:
        database.connect(reuse_if_open=True)
        work()
    except Exception:
        # The rows stay due: the next job or the sweep (engine/callbacks/sweep.py) sends them.
        callbacks_log.exception("the callback pass of job %s failed", key)
    finally:
        release_connection()


def start(concurrency: int = 1, per_workspace: int | None = None) -> None:
    """From now on, delivery jobs of this process hand their notification to the slots."""
    if handing.installed() is None:
        handing.use(DeliverySlots(concurrency, per_workspace))


def close() -> None:
    """Finish the deliveries handed over; jobs deliver inside themselves again."""
    slots = handing.use(None)
    if isinstance(slots, DeliverySlots):
        slots.close()


def installed() -> DeliverySlots | None:
    slots = handing.installed()
    return slots if isinstance(slots, DeliverySlots) else None


def hand(key: str, work: Callable[[], Any], workspace: str | None = None) -> bool:
    """Run ``work`` for the job ``key`` (of ``workspace``) in a slot; False (nothing run)
    without the slots."""
    slots = installed()
    if slots is None:
        return False
    slots.hand(key, work, workspace)
    return True


def hand_delivery(notification_id: str, workspace: str | None = None) -> bool:
    """Deliver the notification in a slot, the delivery called directly; False (nothing
    handed) without the slots."""
    return hand(notification_id, lambda: deliver_notification(notification_id), workspace)


def job_key(job: Job) -> str | None:
    """What the slots know a job by: its notification for a delivery job, its id for a
    callbacks job; None for any other job (RQ runs it)."""
    try:
        function, args = job.func_name, job.args
    except Exception:  # a job that does not load fails in RQ's own hands, as before
        return None
    if function == DELIVERY_JOB and args and isinstance(args[0], str):
        return args[0]
    if function == CALLBACKS_JOB and args:
        return f"callbacks:{job.id}"
    return None


def hand_job(job: Job, workspace: str | None = None) -> None:
    """At dequeue: a delivery job's notification, or a callbacks job's workspace pass, to
    the slots; nothing for another job, or without the slots."""
    slots = installed()
    key = job_key(job)
    if slots is None or key is None:
        return
    if not key.startswith("callbacks:"):
        hand_delivery(key, workspace)
    elif not callback_jobs.hand_over(str(job.args[0]),
                                     lambda work: slots.hand_pass(key, work)):
        slots.settle(key)  # the workspace's pass that waits reads what this job would


def taken(key: str) -> bool:
    """For the job ``key``: True when its work was handed to the slots (the worker settles
    the job without running it); False when RQ must run it."""
    slots = installed()
    return slots.take(key) if slots is not None else False


def waiting() -> bool:
    return handing.waiting()
