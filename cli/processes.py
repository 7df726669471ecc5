"""`herald serve`, `herald worker` and `herald dev`: the commands that run the service."""

from __future__ import annotations

import argparse

from cli.common import CommandError, connect
from config.settings import Settings

MAX_CONCURRENCY = 1024


def cmd_serve(args: argparse.Namespace, settings: Settings) -> None:
    from cli.serve import exposure, serve

    if reason := exposure(settings, args.host):
        raise CommandError(f"refusing to serve on {args.host} outside production: {reason} "
                           "(or pass --host 127.0.0.1)")
    _check_at_start(settings, "the API (herald serve)")
    from engine.observability.metrics_registry import prepare_directory

    prepare_directory()  # before gunicorn forks: every worker counts into it
    serve(settings, host=args.host, port=args.port or settings.port, workers=args.workers)


def cmd_worker(args: argparse.Namespace, settings: Settings) -> None:
    from engine.worker.worker import run_worker

    if args.processes < 1:
        raise CommandError(f"--processes must be at least 1, not {args.processes}")
    if not 1 <= args.concurrency <= MAX_CONCURRENCY:
        raise CommandError(f"--concurrency must be from 1 to {MAX_CONCURRENCY}, "
                           f"not {args.concurrency}")
    # Checked here so an unreachable database or Redis stops the command with one line.
    _check_at_start(settings, "the worker (herald worker)")
    raise SystemExit(run_worker(settings, processes=args.processes, burst=args.burst,
                                fork=args.fork, concurrency=args.concurrency))


def _check_at_start(settings: Settings, process: str) -> None:
    """The database and Redis answer (else one line naming the setting: exit 1 when it does
    not answer, which a restart may outlast; exit 2 when it is not set), then the start-up
    summary in the log format chosen."""
    from engine import runtime
    from engine.observability.log_format import configure_logging
    from engine.observability.startup import Unreachable, check_dependencies, summary

    configure_logging(settings.log_format)
    connect(settings)  # makes a SQLite file's folder; an unreachable database is one line
    try:
        check_dependencies(settings)
    except Unreachable as err:  # exit 1: a supervisor restarts it (exit 2 it must not)
        raise CommandError(str(err)) from None
    runtime.configure(settings)  # drop what the checks opened before the processes start
    summary(settings, process)


def cmd_dev(args: argparse.Namespace, settings: Settings) -> None:
    from cli.dev import run_dev

    raise SystemExit(run_dev(settings, port=args.port))


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="the production API server (gunicorn)")
    p.add_argument("--host", default="0.0.0.0")
    p.add_argument("--port", type=int)
    p.add_argument("--workers", type=int, default=2)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("worker", help="RQ workers with the scheduler")
    p.add_argument("--burst", action="store_true", help="exit when the queue is empty")
    p.add_argument("--processes", type=int, default=1)
    p.add_argument("--concurrency", type=int, default=32,
                   help="deliveries in flight at once per worker process (default 32)")
    p.add_argument("--fork", action="store_true",
                   help="fork a work horse per job (default: run jobs in the worker process)")
    p.set_defaults(func=cmd_worker)

    p = sub.add_parser("dev", help="everything on one machine with embedded defaults")
    p.add_argument("--port", type=int)
    p.set_defaults(func=cmd_dev)
