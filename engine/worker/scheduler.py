"""RQ's scheduler as `herald worker` runs it: bound to its worker, patient with Redis.

RQ starts the scheduler from the worker that holds the queue's scheduler lock, and the lock
names that scheduler. Left to itself, a scheduler whose worker was killed lives on under
PID 1, renewing the lock, and no live worker can take the scheduler over. Here:

- the scheduler is a process of its own (``python -m engine.worker.scheduler``), not a
  fork: RQ forks it from a worker whose other threads (delivery, reconciler) log, and a
  fork taken while one of them held the lock of stderr hangs at its first line, beyond
  the reach of any signal but SIGKILL;
- the scheduler gets SIGTERM when its worker dies (engine/worker/lifeline.py) and stops
  as RQ stops it, releasing the lock;
- its lease is ``LEASE_SECONDS`` instead of RQ's 61, renewed every second as before (and by
  its worker for up to ``STARTING_SECONDS`` while the process starts), so a scheduler
  killed outright (SIGKILL of the whole process group) frees the lock soon;
- one scheduler holds every queue's lock or none (RQ's lock per queue let two workers
  starting together each take some and each start one);
- a scheduler that lost a lock to another (after Redis lost it) ends, where RQ's would
  idle on; its worker starts one again when the locks are free;
- a lost Redis is waited out (engine/queue/redis_outages.py), quietly: the worker's own
  line says so.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from redis import Redis
from redis.exceptions import RedisError
from rq.scheduler import RQScheduler, run
from rq.scripts import ACQUIRE_OR_REFRESH_LOCK_SCRIPT, acquire_or_refresh_lock, release_lock

from engine.queue import redis_clients, redis_outages
from engine.worker import lifeline
from engine.worker.process_log import configure_logging

log = logging.getLogger("herald.scheduler")
LEASE_SECONDS = 10
# How long a scheduler process may take to start (its imports, on a loaded machine) with its
# worker keeping its lease.
STARTING_SECONDS = 120.0


class HeraldScheduler(RQScheduler):
    """RQ's scheduler, dying with its worker and holding its lock on a short lease."""

    _worker_pid = 0

    def __init__(self, queues: Any, connection: Redis, **options: Any) -> None:
        super().__init__(queues, connection=connection, **options)
        self._given = connection

    @property
    def connection(self) -> Redis:
        """The client it was given, never one RQ rebuilds from the client's pool options:
        a rebuilt pool would lose Sentinel's (it would keep asking the old primary)."""
        return self._given

    def start(self) -> SchedulerProcess:
        """Start the scheduler's process; called in the worker that took the lock."""
        from engine import runtime

        self._status = self.Status.STARTED
        command = [sys.executable, "-m", "engine.worker.scheduler", "--worker",
                   str(os.getpid()), "--name", self.name, *sorted(self._queue_names)]
        # The address stays out of the command line: `ps` would show its password.
        env = {**os.environ, "HERALD_REDIS_URL": runtime.settings().redis_url or ""}
        self._process = SchedulerProcess(subprocess.Popen(command, env=env))
        return self._process

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
        """Every queue's lock, on the short lease, or none. RQ takes each lock on its own,
        in the order of a set, which differs between processes (string hashes are seeded
        per process): two workers starting together each took some of the locks and each
        started a scheduler. Here the locks are taken in one order, the first one refused
        ends the attempt, and what a partial attempt took is given back."""
        held: set[str] = set()
        for name in sorted(self._queue_names):
            key = self.get_locking_key(name)
            if acquire_or_refresh_lock(self.connection, key, self.name, LEASE_SECONDS) == "taken":
                break
            held.add(name)
        if held != self._queue_names:
            for name in held:
                release_lock(self.connection, self.get_locking_key(name), self.name)
            held = set()
        self._scheduled_job_registries = []  # as RQ's: built again from the locks held
        self._acquired_locks = held
        self.lock_acquisition_time = datetime.now()
        if held and auto_start and (self._process is None or not self._process.is_alive()):
            self.start()
        return held

    def keep_lease(self) -> None:
        """Renew, from the worker, the locks its scheduler process was started under. A
        process can take longer than the lease to start (imports, on a loaded machine):
        left to lapse, the lock went to another worker, whose scheduler was as slow, and
        the two took turns for as long as the load lasted. Owner-checked, as the
        heartbeat: a lock another scheduler holds is left alone."""
        for name in sorted(self._acquired_locks):
            acquire_or_refresh_lock(self.connection, self.get_locking_key(name), self.name,
                                    LEASE_SECONDS)

    def heartbeat(self) -> None:
        """RQ's heartbeat, then the short lease, and the scheduler's whole record written
        again (RQ's heartbeat writes one field: after Redis lost the record, the rest)."""
        super().heartbeat()
        if self._acquired_locks != self._queue_names:
            # Another scheduler took a lock (after Redis lost it, say): RQ would idle on for
            # minutes; this one ends, and its worker starts one again once the locks free.
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


class SchedulerProcess:
    """The scheduler's process, as RQ's worker asks after it (a multiprocessing.Process's
    ``pid``, ``is_alive``, ``join``, ``exitcode``)."""

    def __init__(self, popen: subprocess.Popen) -> None:
        self._popen = popen
        self._started = time.monotonic()

    def starting(self) -> bool:
        """True for ``STARTING_SECONDS`` after its start: its worker keeps its lease meanwhile.
        After that its own heartbeat must: a process that hangs loses the locks to another
        worker's scheduler, as before."""
        return time.monotonic() - self._started < STARTING_SECONDS

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def exitcode(self) -> int | None:
        return self._popen.poll()

    def is_alive(self) -> bool:
        return self._popen.poll() is None

    def join(self, timeout: float | None = None) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._popen.wait(timeout)


def main(argv: Sequence[str] | None = None) -> int:
    """The scheduler process: RQ's scheduler loop under the name its worker locked with."""
    parser = argparse.ArgumentParser(prog="python -m engine.worker.scheduler")
    parser.add_argument("--worker", type=int, required=True, help="die with this process")
    parser.add_argument("--name", required=True, help="the name the lock was taken under")
    parser.add_argument("queues", nargs="+")
    args = parser.parse_args(argv)
    # Its worker checked HERALD_LOG_FORMAT; this process was started, not forked.
    configure_logging(os.environ.get("HERALD_LOG_FORMAT", "text").strip().lower())
    connection = redis_clients.connect(os.environ["HERALD_REDIS_URL"], health_check_interval=30,
                                       **redis_outages.client_options())
    scheduler = HeraldScheduler(args.queues, connection=connection, name=args.name)
    scheduler._worker_pid = args.worker
    run(scheduler)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
