"""`herald worker`: RQ workers with the scheduler and the reconciler, one or several processes.

One worker process runs an RQ worker (engine/worker/worker_class.py), its delivery slots
and its reconciler thread; it ends on SIGTERM or SIGINT (after the delivery in hand, exit 0)
or on a configuration error (exit 2), never because Redis went away: its Redis client waits
for it (engine/queue/redis_outages.py), and an RQ work loop that ends on its own is started
again. With ``--processes N`` a parent keeps N of them (engine/worker/supervisor.py).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence

from redis.exceptions import AuthenticationError, AuthorizationError, RedisError, ResponseError

from config.settings import ConfigError, Settings, load_settings
from engine import runtime
from engine.callbacks.sweep import run_periodically as sweep_callbacks
from engine.database.db import wait_for_pooled_connections
from engine.long_lived import freeze_loaded_objects
from engine.plugins.manager import check_providers
from engine.queue import redis_outages
from engine.queue.queueing import WORKER_QUEUE_NAMES
from engine.reports.job import run_periodically as report_job
from engine.retention.purge import run_periodically as purge_data
from engine.senders.recheck import run_periodically as recheck_senders
from engine.worker import handoff, lifeline
from engine.worker.list_sweep import run_periodically as sweep_lists
from engine.worker.process_log import configure_logging
from engine.worker.reconciler import run_periodically
from engine.worker.supervisor import Supervisor
from engine.worker.worker_class import ForkingHeraldWorker, HeraldWorker

log = logging.getLogger("herald.worker")
MAX_LOOP_PAUSE = 30.0
STEADY_SECONDS = 60.0  # a work loop that ran this long ended of something new: no pause
POOL_WAIT_SECONDS = 30.0


def run_worker(settings: Settings, processes: int = 1, burst: bool = False,
               fork: bool = False, concurrency: int = handoff.DEFAULT_CONCURRENCY) -> int:
    """Run ``processes`` workers until a signal (exit 0) or a configuration error (exit 2)."""
    configure_logging(settings.log_format)
    if settings.worker_metrics_port and settings.metrics_token:
        from engine.observability.metrics_registry import prepare_directory
        from engine.observability.metrics_server import serve_in_background

        prepare_directory()  # before any worker process starts: each counts into it
        serve_in_background(settings.worker_metrics_port, settings.metrics_token)
    if processes <= 1:
        return _work(settings, burst, fork, concurrency=concurrency)
    return Supervisor(processes, burst=burst, fork=fork, concurrency=concurrency).run()


def _work(settings: Settings, burst: bool, fork: bool, urgent: bool = False,
          concurrency: int = handoff.DEFAULT_CONCURRENCY) -> int:
    """One worker process, until a signal; ``urgent``: reconcile at once (a replacement);
    ``concurrency``: deliveries in flight at once (engine/worker/handoff.py)."""
    runtime.configure(settings, patient_redis=True)
    _stop_on_signals()
    from engine.delivery.providers import close_all
    from engine.plugins.manager import default_registry

    if not _wait_for_redis():
        return 0
    default_registry()  # load plugins before the first job, not during it
    freeze_loaded_objects()  # out of the garbage collector's full walks (engine/long_lived.py)
    stop = threading.Event()
    threading.Thread(target=run_periodically, args=(stop, None, urgent), daemon=True,
                     name="herald-reconciler").start()
    start_periodic_tasks(stop)
    # No fork per job by default: the deliveries reuse this process's DB and SMTP
    # connections, and run in the delivery slots beside RQ's bookkeeping (a forked child
    # would exit first).
    if not fork:
        # The slots outnumber the pooled database connections: they wait for one.
        wait_for_pooled_connections(POOL_WAIT_SECONDS)
        handoff.start(concurrency, handoff.workspace_share(
            concurrency, settings.workspace_concurrency))
    try:
        _run_rq(burst, fork)
    finally:
        redis_outages.stop_waiting()
        handoff.close()
        stop.set()
        close_all()
    return 0


# Periodic work beside the reconciler: each loop ``target(stop)`` runs on its own thread
# until the worker stops, and takes its own Redis lock, so one worker at a time runs a pass.
PERIODIC_TASKS: tuple[tuple[str, Callable[[threading.Event], None]], ...] = (
    ("herald-senders-recheck", recheck_senders),
    ("herald-reports", report_job),  # rollups, search index, retention (docs/reports.md)
    ("herald-callbacks-sweep", sweep_callbacks),  # callbacks whose job was lost
    ("herald-data-purge", purge_data),  # daily: past each workspace's retention
    ("herald-lists", sweep_lists),  # list schedules due, list jobs lost, unsent lists
)


def start_periodic_tasks(stop: threading.Event) -> None:
    for name, loop in PERIODIC_TASKS:
        threading.Thread(target=loop, args=(stop,), daemon=True, name=name).start()


def _stop_on_signals() -> None:
    """Outside RQ's work loop (it installs its own handlers), a signal ends the waiting."""
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: redis_outages.stop_waiting())


def _wait_for_redis() -> bool:
    """Wait until Redis answers (one log line while it does not); False if stopped first.

    Redis refusing this worker (credentials, permissions, a database number it does not
    have) is a configuration error: no wait fixes it.
    """
    try:
        runtime.redis().ping()
    except (AuthenticationError, AuthorizationError, ResponseError) as err:
        raise ConfigError("HERALD_REDIS_URL", "Redis refuses this worker: "
                          + " ".join(str(err).split())) from None
    except RedisError:
        if redis_outages.waiting_stopped():
            return False
        raise
    return not redis_outages.waiting_stopped()


def _run_rq(burst: bool, fork: bool) -> None:
    """RQ's work loop, started again (after a growing pause) if it ends without a signal."""
    pause = 0.0
    worker_class = ForkingHeraldWorker if fork else HeraldWorker
    while _wait_for_redis():
        started = time.monotonic()
        try:
            worker = worker_class(list(WORKER_QUEUE_NAMES), connection=runtime.redis())
            worker.work(burst=burst, with_scheduler=True, logging_level="INFO")
        except RedisError:
            if redis_outages.waiting_stopped():
                return
            log.exception("RQ's worker failed to start")
        if burst or redis_outages.waiting_stopped():
            return
        _stop_on_signals()  # RQ's handlers belonged to the worker that ended
        steady = time.monotonic() - started >= STEADY_SECONDS
        pause = 1.0 if steady else min(MAX_LOOP_PAUSE, pause * 2 or 1.0)
        log.error("RQ's work loop ended without a signal; starting it again in %.0f s", pause)
        deadline = time.monotonic() + pause
        while not redis_outages.waiting_stopped() and time.monotonic() < deadline:
            time.sleep(0.1)


def main(argv: Sequence[str] | None = None) -> int:
    """A worker process of `herald worker --processes N` (the parent passes --parent)."""
    parser = argparse.ArgumentParser(prog="python -m engine.worker.worker")
    parser.add_argument("--burst", action="store_true")
    parser.add_argument("--fork", action="store_true")
    parser.add_argument("--concurrency", type=int, default=handoff.DEFAULT_CONCURRENCY)
    parser.add_argument("--parent", type=int, help="die with this process (the supervisor)")
    parser.add_argument("--replacement", action="store_true",
                        help="reconcile at once: this process replaces one that died")
    args = parser.parse_args(argv)
    configure_logging()
    if args.parent:
        lifeline.bind_to_parent(args.parent)
    try:
        settings = load_settings()
        configure_logging(settings.log_format)
        check_providers(settings)
        return _work(settings, args.burst, args.fork, urgent=args.replacement,
                     concurrency=max(1, args.concurrency))
    except ConfigError as err:
        print(f"herald: configuration error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
