"""The RQ worker classes of `herald worker`: RQ's own, made to run unattended.

What RQ's worker lacks, added where RQ's worker class is meant to be extended:

- **Redis lost is a wait.** The worker's client retries a lost connection until Redis is
  back (engine/queue/redis_outages.py). RQ's bookkeeping around a job that fails anyway (a
  Redis error of another kind) is logged and the worker goes on: the database is the record
  of the notification, and the delivery slots or the reconciler take it up.
- **The scheduler follows its worker** (engine/worker/scheduler.py), and a worker checks
  every ``SCHEDULER_CHECK_SECONDS`` (RQ: every 10 minutes) whether the scheduler runs
  somewhere, starting it here when its lock is free or its process here died. Stopping,
  the worker waits ``SCHEDULER_STOP_SECONDS`` for it, then kills it.
- **Each workspace takes its turn**: jobs are taken from the workspaces' lanes of each
  queue in turn (engine/queue/lanes.py), not first come, first served.
- **Idle workers look around**: the dequeue blocks ``DEQUEUE_SECONDS`` at a time (RQ: 405),
  then heartbeats and checks the scheduler.
- **Redis restarted empty**: the worker writes its RQ record again (redis_watch), so
  ``rq info`` lists it.
- **A prompt exit**: RQ's pub/sub thread wakes every second, and the teardown waits for it
  at most ``PUBSUB_STOP_SECONDS`` (RQ's waited up to 60 s, and redis-py 8's stop() waits
  without a bound for a thread still reading).
- **A signal handler does no I/O**: RQ's writes the stop request to Redis from the handler
  (in an outage, the error would surface in the middle of the job it interrupted), and a
  guard around RQ's bookkeeping never swallows the StopRequested a signal raises.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Sequence
from typing import Any

from redis import Redis
from redis.exceptions import RedisError
from rq import Queue, SimpleWorker, Worker, worker_registration
from rq.defaults import DEFAULT_LOGGING_DATE_FORMAT, DEFAULT_LOGGING_FORMAT
from rq.exceptions import DequeueTimeout, StopRequested
from rq.job import Job
from rq.worker import WorkerStatus

from engine.queue import lanes, redis_outages
from engine.worker import handoff, redis_watch
from engine.worker.scheduler import HeraldScheduler

log = logging.getLogger("herald.worker")
SCHEDULER_CHECK_SECONDS = 2.0
SCHEDULER_STOP_SECONDS = 10.0
DEQUEUE_SECONDS = 2
PUBSUB_WAKE_SECONDS = 1.0
# How long the teardown waits for the pub/sub thread to end: a few of its wakes.
PUBSUB_STOP_SECONDS = 3.0
HELD_LOOK_SECONDS = 0.05  # a worker whose queues hold only full workspaces' jobs looks again


class _LaneQueue(Queue):
    """RQ's Queue, its jobs taken lane by lane: each workspace in turn, inside each queue.

    RQ's ``dequeue_any`` pops through ``lpop`` (LPOP, or BLPOP with a timeout); this one
    takes with the lanes' script instead: one round trip a job while jobs wait, as RQ's
    LPOP. Only when every queue is empty does it block in RQ's BLPOP, then hand what that
    popped to the script, which puts it back at its list's head and takes in turn, in one
    more call.
    """

    @classmethod
    def lpop(cls, queue_keys: Sequence[str], timeout: int | None,
             connection: Redis | None = None) -> tuple[bytes, bytes] | None:
        assert connection is not None
        taken = lanes.take(connection, queue_keys)
        if taken is not None or timeout is None:
            return taken
        if timeout == 0:
            raise ValueError("RQ does not support indefinite timeouts. Please pick a "
                             "timeout value > 0")
        popped = connection.blpop(queue_keys, timeout)
        if popped is None:
            raise DequeueTimeout(timeout, queue_keys)
        queue_key, job_id = popped
        # Back at the head it was popped from, so never later than it came. Had another
        # worker meanwhile taken its lane entry, or dropped the lanes as stale, it is served
        # as untracked: each ticket is served once either way.
        return lanes.take(connection, queue_keys, back=(_text(queue_key), job_id))

    @classmethod
    def lmove(cls, connection: Redis, queue_key: str,
              timeout: int | None) -> tuple[bytes, bytes] | None:
        """RQ's choice for a worker of one queue on Redis 6.2 or later: the job id moved to
        an intermediate list until the job starts. Here it takes the lanes' way, as with
        several queues (``herald worker`` serves three): a worker killed between taking a
        job and starting it leaves the job to the reconciler, which looks for exactly that.
        """
        return cls.lpop([queue_key], timeout, connection=connection)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class _HandingQueue(_LaneQueue):
    """A lane queue that takes a job only when a delivery slot is free (a callbacks job
    also only when a pass slot is), passes the turn of each workspace at its most in flight
    here, and hands a delivery job's notification, or a callbacks job's pass, to the slots
    once dequeued (engine/worker/handoff.py)."""

    _workspace: str | None = None  # the workspace of the job the last take gave

    @classmethod
    def lpop(cls, queue_keys: Sequence[str], timeout: int | None,
             connection: Redis | None = None) -> tuple[bytes, bytes] | None:
        assert connection is not None
        slots = handoff.installed()
        if slots is None:
            return super().lpop(queue_keys, timeout, connection=connection)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not slots.room(left):
                raise DequeueTimeout(timeout, queue_keys)
            keys = slots.serving(queue_keys)
            taken = lanes.take_turn(connection, keys, full=slots.full())
            if taken == lanes.HELD:  # only full workspaces' jobs wait: look again soon
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise DequeueTimeout(timeout, queue_keys)
                # Woken when a delivery ends; else after HELD_LOOK_SECONDS, for a job of
                # another workspace that came meanwhile (no blocking pop sees it: the
                # lists hold the full workspaces' jobs).
                slots.wait_for_change(HELD_LOOK_SECONDS if left is None
                                      else min(left, HELD_LOOK_SECONDS))
                continue
            if isinstance(taken, lanes.Taken):
                cls._workspace = taken.workspace
                return taken.queue_key, taken.job_id
            if timeout is None:
                return None
            left = max(0.0, deadline - time.monotonic()) if deadline is not None else 0.0
            if left < 1:
                raise DequeueTimeout(timeout, queue_keys)
            popped = connection.blpop(keys, int(left))
            if popped is None:
                raise DequeueTimeout(timeout, queue_keys)
            # As _LaneQueue: back at the head it was popped from, then taken in turn.
            queue_key, job_id = popped
            taken = lanes.take_turn(connection, keys, back=(_text(queue_key), job_id),
                                    full=slots.full())
            if isinstance(taken, lanes.Taken):
                cls._workspace = taken.workspace
                return taken.queue_key, taken.job_id

    @classmethod
    def dequeue_any(cls, *args: Any, **kwargs: Any) -> tuple[Job, Queue] | None:
        cls._workspace = None
        result = super().dequeue_any(*args, **kwargs)
        if result is not None:
            handoff.hand_job(result[0], cls._workspace)
        return result


class _Unattended:
    """Mixed into RQ's worker classes (see the module's docstring)."""

    _scheduler_checked = 0.0
    _losses_seen = 0
    _gone = 0  # the pid of the last scheduler process seen ended
    _burst = False  # a burst runs the scheduler once, inline: no process to watch
    _settling = False  # a delivery job handed over is being settled (HeraldWorker)

    @property
    def dequeue_timeout(self) -> int:
        return DEQUEUE_SECONDS

    @property
    def should_run_maintenance_tasks(self) -> bool:
        due = time.monotonic() - self._scheduler_checked >= SCHEDULER_CHECK_SECONDS
        watched = self.scheduler is not None and not self._burst
        return super().should_run_maintenance_tasks or (watched and due)

    def run_maintenance_tasks(self) -> None:
        if super().should_run_maintenance_tasks:
            super().run_maintenance_tasks()  # RQ's own: the registries, and the scheduler
        if self.scheduler is not None and not self._burst:
            self._ensure_scheduler()
        self._scheduler_checked = time.monotonic()

    def _ensure_scheduler(self) -> None:
        """Run the scheduler here if its process here died or no worker holds its lock; while
        its process here starts, keep its lease."""
        process = self.scheduler._process
        if process is not None and not process.is_alive() and process.pid != self._gone:
            self._gone = process.pid  # one line per process that ended
            log.warning("the scheduler process (pid %s) ended (exit code %s); it starts again "
                        "here or in another worker", process.pid, process.exitcode)
        if process is None or not process.is_alive():
            self.scheduler.acquire_locks(auto_start=True)
        elif process.starting():
            self.scheduler.keep_lease()

    def _start_scheduler(self, burst: bool = False, logging_level: Any = "INFO",
                         date_format: str = DEFAULT_LOGGING_DATE_FORMAT,
                         log_format: str = DEFAULT_LOGGING_FORMAT) -> None:
        """RQ's own, with Herald's scheduler class."""
        self._burst = burst
        self.scheduler = HeraldScheduler(
            self.queues, connection=self.connection, logging_level=logging_level or "INFO",
            date_format=date_format, log_format=log_format, serializer=self.serializer)
        self.scheduler.acquire_locks()
        if not self.scheduler.acquired_locks:
            return
        if not burst:
            self.scheduler.start()
            return
        try:
            self.scheduler.register_birth()
            self.scheduler.enqueue_scheduled_jobs()
        finally:
            self.scheduler.release_locks()
            self.scheduler.register_death()

    def stop_scheduler(self) -> None:
        """RQ's stop (SIGTERM, then wait), but a scheduler that does not end within
        ``SCHEDULER_STOP_SECONDS`` is killed: the worker's own stop must not hang on it."""
        process = self.scheduler._process if self.scheduler else None
        if process is None or not process.is_alive():
            return
        with contextlib.suppress(OSError):
            os.kill(process.pid, signal.SIGTERM)
        process.join(SCHEDULER_STOP_SECONDS)
        if process.is_alive():
            log.warning("the scheduler process (pid %s) did not stop within %.0f s; killing it",
                        process.pid, SCHEDULER_STOP_SECONDS)
            with contextlib.suppress(OSError):
                os.kill(process.pid, signal.SIGKILL)
            process.join()

    def execute_job(self, job: Job, queue: Queue) -> None:
        try:
            super().execute_job(job, queue)
        except StopRequested:  # a signal while idle: RQ's loop must see it
            raise
        except Exception as error:  # RQ's bookkeeping around the job; the job catches its own
            if not redis_outages.waiting_stopped():
                log.warning("RQ's bookkeeping of job %s failed (%s): the database keeps the "
                            "notification and the reconciler takes it up if needed", job.id,
                            " ".join(str(error).split()) or type(error).__name__)

    def handle_job_success(self, job: Job, queue: Queue, started_job_registry: Any,
                           execution: Any) -> None:
        try:
            super().handle_job_success(job, queue, started_job_registry, execution)
        except StopRequested:
            raise
        except Exception as error:
            # The job did its work; RQ failing to file it away (its record, or its
            # execution's, lost in a Redis restart or a FLUSHALL) must not fail it.
            log.info("job %s done; RQ could not file it away (%s)", job.id,
                     " ".join(str(error).split()) or type(error).__name__)

    def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
        try:
            if pipeline is None:
                self._rejoin_if_redis_forgot()
            super().heartbeat(timeout, pipeline)
        except RedisError:
            if not redis_outages.waiting_stopped():
                raise

    def _rejoin_if_redis_forgot(self) -> None:
        """Write RQ's record of this worker again after Redis lost it (rq info lists it)."""
        losses = redis_watch.losses()
        if losses == self._losses_seen or self.birth_date is None:
            return
        self._losses_seen = losses
        with self.connection.pipeline() as pipe:
            pipe.hset(self.key, mapping=self.serialize())
            worker_registration.register(self, pipe)
            pipe.expire(self.key, self.worker_ttl + 60)
            pipe.execute()

    def _install_signal_handlers(self) -> None:
        super()._install_signal_handlers()
        if redis_outages.waiting_stopped():  # a signal came before RQ's handlers: honour it
            self._stop_requested = True

    def request_stop(self, signum: int, frame: Any) -> None:
        redis_outages.stop_waiting()  # from now on a lost Redis ends the wait
        super().request_stop(signum, frame)

    def _shutdown(self) -> None:
        """RQ's, minus what RQ does inside the signal handler: write the request to Redis (in
        an outage the error would surface in the middle of the job the handler interrupted)
        and wait for the scheduler to stop. The loop stops after the job, and teardown
        stops the scheduler. The request is kept before the idle worker's StopRequested is
        raised: raised inside code that catches every exception (logging's emit, when the
        signal lands while a line is written), it would otherwise be lost for good."""
        self._stop_requested = True
        if self.get_state() != WorkerStatus.BUSY and not self._settling:
            raise StopRequested()

    def subscribe(self) -> None:
        """RQ's own, its pub/sub thread waking every ``PUBSUB_WAKE_SECONDS`` (RQ: 60 s): at
        teardown RQ stops the thread and waits for it to wake, which held a worker's exit
        for up to a minute after SIGTERM."""
        self.log.info("Worker %s: subscribing to channel %s", self.name,
                      self.pubsub_channel_name)
        self.pubsub = self.connection.pubsub()
        self.pubsub.subscribe(**{self.pubsub_channel_name: self.handle_payload})
        self.pubsub_thread = self.pubsub.run_in_thread(
            sleep_time=PUBSUB_WAKE_SECONDS, daemon=True,
            exception_handler=self._pubsub_exception_handler)

    def unsubscribe(self) -> None:
        """RQ's, with its wait bounded. RQ sends UNSUBSCRIBE, then calls the thread's stop(),
        which since redis-py 8 joins the thread without a bound: a thread still in a read
        (a socket timeout is 20 s, and a reconnect retries) held the worker's exit after
        SIGTERM. The thread closes the subscription's connection as it ends, which
        unsubscribes as surely; one that has not ended by the bound is a daemon, and the
        process's exit ends it."""
        thread = self.pubsub_thread
        if thread is None:
            return
        self.log.info("Worker %s: unsubscribing from channel %s", self.name,
                      self.pubsub_channel_name)
        thread._running.clear()  # what stop() does before its wait (every redis-py version)
        if thread is not threading.current_thread():
            thread.join(PUBSUB_STOP_SECONDS)

    def teardown(self) -> None:
        try:
            super().teardown()
        except RedisError:
            if not redis_outages.waiting_stopped():
                raise
            log.info("stopped with Redis unreachable: RQ's record of this worker expires "
                     "by itself")


class HeraldWorker(_Unattended, SimpleWorker):
    """RQ's SimpleWorker, with each delivery job's notification handed to a delivery slot,
    and each callbacks job's pass to a pass slot, as soon as the job is dequeued: many run
    beside RQ's own work for the job and the next ones (engine/worker/handoff.py)."""

    queue_class = _HandingQueue

    def execute_job(self, job: Job, queue: Queue) -> None:
        """A delivery job whose notification a delivery slot took, or a callbacks job whose
        pass a pass slot took, is settled here, without RQ's execution: the slot calls the
        delivery or the pass itself, the database records what became of it, and RQ's
        records of the job (the started registry, its execution, its status, its result)
        were a third of the worker's CPU per email (docs/performance.md). Anything else,
        and a job the slots did not take, runs as RQ runs it: the job function delivers or
        sends, and RQ files it finished or failed."""
        key = handoff.job_key(job)
        if key is None or handoff.installed() is None:
            return super().execute_job(job, queue)
        self._settling = True  # a SIGTERM now stops the loop after this job, not inside it
        try:
            # Never waits: the delivery or the pass runs in its slot.
            taken = handoff.taken(key)
        finally:
            self._settling = False
        if not taken:
            return super().execute_job(job, queue)  # delivers inside the job, as before
        try:
            # RQ keeps nothing of a job done (its result_ttl is 0): its hash goes at once.
            self.connection.delete(job.key)
        except RedisError as error:
            if not redis_outages.waiting_stopped():
                log.warning("job %s handed over; RQ's record of it was not deleted (%s)",
                            job.id, " ".join(str(error).split()) or type(error).__name__)
        return None


class ForkingHeraldWorker(_Unattended, Worker):
    """RQ's fork-per-job Worker (`herald worker --fork`), unattended and taking lanes in
    turn likewise."""

    queue_class = _LaneQueue
