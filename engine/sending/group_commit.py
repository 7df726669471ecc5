"""Group commit: concurrent sends of one process share one INSERT, its commit and one enqueue
round trip (docs/performance.md, "Measurements behind the code's shape").

A send that finds no group at work leads: it takes every row waiting (its own among them),
inserts them in one statement, enqueues their jobs in one Redis round trip and wakes their
sends; the first send that arrived meanwhile then leads the next group. There is no timer
and no window: a group holds only sends that would otherwise have waited for the database
anyway, so a send alone takes the path it always took. A send still answers 202 only once
its own row is committed and its job enqueued (or, Redis gone, left to the reconciler, as
before). A row that the database refuses fails its own send only: the group is then
inserted row by row. A database lost fails the whole group (its commit may have happened
unheard: engine/queue/unheard_commits.py). Sends with an Idempotency-Key join too: their
job's enqueue call marks the key's record done, and a row the key's unique index refuses
fails its own send, whose caller answers it as the replay it is
(engine/sending/idempotency.py, ``insert_once``).

Measured (docs/performance.md): under the bench's load half the sends join a group of two
to four, and the machine spends about a tenth less CPU per send.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.observability.outages import dependency_of, incidents

log = logging.getLogger("herald.api")

# Rows in one INSERT: far above a process's threads, it bounds the statement a burst of
# list sends (engine/lists/) could build.
MAX_GROUP = 32

# (notification id, bulk, workspace id[, record]) as the enqueue takes it
# (engine/delivery/queue.py): its first item names the notification in a log line.
Job = tuple


@dataclass
class _Send:
    """One send waiting in a group: its row, its job, and how it ended."""

    row: tuple
    job: Job
    done: threading.Event = field(default_factory=threading.Event)
    lead: bool = False  # woken to lead the next group, not because its own row is in
    error: BaseException | None = None


class GroupCommit:
    """The sends of one process, grouped; ``submit`` returns once the send is committed."""

    def __init__(self, insert_rows: Callable[[list[tuple]], None],
                 enqueue: Callable[[list[Job]], None]) -> None:
        self._insert_rows, self._enqueue = insert_rows, enqueue
        self._lock = threading.Lock()
        self._waiting: list[_Send] = []
        self._leading = False

    def submit(self, row: tuple, job: Job) -> None:
        """Insert ``row`` and enqueue ``job``, alone or with the sends beside it; raises what
        inserting this row raised (nothing of it is then accepted)."""
        send = _Send(row, job)
        with self._lock:
            self._waiting.append(send)
            lead = not self._leading
            self._leading = True
        if not lead:
            send.done.wait()
            if send.lead:  # its row is still waiting: it leads the group it is in
                send.lead = False
                self._run()
        else:
            self._run()
        if send.error is not None:
            raise send.error

    def _run(self) -> None:
        """Insert and enqueue the sends waiting now, wake them, hand the lead on."""
        with self._lock:
            group, self._waiting = self._waiting[:MAX_GROUP], self._waiting[MAX_GROUP:]
        try:
            self._insert(group)
            self._enqueued([s for s in group if s.error is None])
        finally:
            with self._lock:
                following = self._waiting[0] if self._waiting else None
                self._leading = following is not None
            for send in group:
                send.done.set()
            if following is not None:
                following.lead = True
                following.done.set()

    def _insert(self, group: list[_Send]) -> None:
        try:
            self._insert_rows([s.row for s in group])
        except BaseException as err:
            if len(group) == 1 or dependency_of(err) is not None:
                # A database lost may have committed the group unheard: inserted again, its
                # rows would meet their own. Each send answers 503 (and marks its row).
                for send in group:
                    send.error = err
                return
            for send in group:  # which row it was: each alone, as if none had been grouped
                try:
                    self._insert_rows([send.row])
                except BaseException as own:  # raised again in its own send
                    send.error = own

    def _enqueued(self, group: list[_Send]) -> None:
        """Committed: from here each send is accepted; if Redis is down the reconciler
        enqueues their jobs."""
        if not group:
            return
        try:
            self._enqueue([s.job for s in group])
        except Exception as err:
            if (part := dependency_of(err)) is not None:
                incidents.failed(part, err)  # one line per incident
            else:
                log.warning("%d notification(s) accepted (%s); their jobs were not enqueued "
                            "(%s): the reconciler enqueues them", len(group),
                            ", ".join(s.job[0] for s in group), type(err).__name__)
