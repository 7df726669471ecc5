"""RQ's scheduler as `herald worker` runs it: bound to its worker, patient with Redis.

RQ forks the scheduler from the worker that holds the queue's scheduler lock, and the lock
names that scheduler. Left to itself, a scheduler whose worker was killed lives on under
PID 1, renewing the lock, and no live worker can take the scheduler over. Here:

- the scheduler gets SIGTERM when its worker dies (engine/delivery/lifeline.py) and stops
  as RQ stops it, releasing the lock;
- its lease is ``LEASE_SECONDS`` instead of RQ's 61, renewed every second as before, so a
  scheduler killed outright (SIGKILL of the whole process group) frees the lock soon;
- a scheduler that lost its lock to another (after Redis lost it) ends, where RQ's would
  idle on; its worker starts one again when the lock is free;
- a lost Redis is waited out (engine/store/redis_outages.py), quietly: the worker's own
  line says so.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from redis.exceptions import RedisError
from rq.scheduler import RQScheduler
from rq.scripts import ACQUIRE_OR_REFRESH_LOCK_SCRIPT, acquire_or_refresh_lock

from engine.delivery import lifeline
from engine.store import redis_outages

log = logging.getLogger("herald.scheduler")
LEASE_SECONDS = 10


class HeraldScheduler(RQScheduler):
    """RQ's scheduler, dying with its worker and holding its lock on a short lease."""

    _worker_pid = 0

    def start(self) -> Any:
        self._worker_pid = os.getpid()  # runs in the worker, just before the fork
        return super().start()

    def work(self) -> None:
        """The scheduler process's main loop."""
        redis_outages.quiet()
        lifeline.bind_to_parent(self._worker_pid)
        try:
            super().work()
        except RedisError:
            if not redis_outages.waiting_stopped():
                raise
            log.debug("scheduler stopped with Redis unreachable; its lease runs out by itself")

    def request_stop(self, signum: Any = None, frame: Any = None) -> None:
        redis_outages.stop_waiting()
        super().request_stop(signum, frame)

    def acquire_locks(self, auto_start: bool = False) -> set[str]:
        held = super().acquire_locks(auto_start)
        for name in held:
            acquire_or_refresh_lock(self.connection, self.get_locking_key(name), self.name,
                                    LEASE_SECONDS)
        return held

    def heartbeat(self) -> None:
        """RQ's heartbeat, then the short lease, and the scheduler's whole record written
        again (RQ's heartbeat writes one field: after Redis lost the record, the rest)."""
        super().heartbeat()
        if not self._acquired_locks:
            # Another scheduler took the lock (after Redis lost it, say): RQ would idle on
            # for minutes; this one ends, and its worker starts one again if the lock frees.
            self._stop_requested = True  # RQ's own stop, at the top of its loop
            return
        script = self.connection.register_script(ACQUIRE_OR_REFRESH_LOCK_SCRIPT)
        with self.connection.pipeline() as pipe:
            for name in sorted(self._acquired_locks):
                # RQ's own script, owner-checked: a lock another scheduler took is left alone.
                script(keys=[self.get_locking_key(name)], args=[self.name, LEASE_SECONDS],
                       client=pipe)
            self.save(pipe)
            pipe.execute()
