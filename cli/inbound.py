"""`herald bounces`, `herald inbound url` and `herald reports run`: the inbound paths and
the report job (docs/reports.md)."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading

from cli.common import CommandError, connect, emit, workspace
from config.settings import Settings


def cmd_bounces(args: argparse.Namespace, settings: Settings) -> None:
    from engine.inbound import listener

    connect(settings).close()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        controller = listener.start(args.host, args.port)
    except (OSError, RuntimeError) as err:
        raise CommandError(f"cannot listen on {args.host}:{args.port}: {err}") from None
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    print(f"herald bounces: listening on {args.host}:{args.port}", file=sys.stderr, flush=True)
    try:
        stop.wait()
    finally:
        controller.stop()


def cmd_inbound_url(args: argparse.Namespace, settings: Settings) -> None:
    from engine.inbound import workspace_secrets

    connect(settings)
    found = workspace(args.workspace)
    try:
        url = workspace_secrets.webhook_url(found, args.provider)
    except LookupError as err:
        raise CommandError(f"--provider: {err}") from None
    emit({"workspaceId": str(found.id), "provider": args.provider, "url": url})


def cmd_reports_run(args: argparse.Namespace, settings: Settings) -> None:
    from engine.reports.job import run_once

    connect(settings)
    emit(run_once())


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bounces", help="the return-path SMTP listener (DSN and ARF reports)")
    p.add_argument("--host", default="0.0.0.0")
    p.add_argument("--port", type=int, default=25)
    p.set_defaults(func=cmd_bounces)

    inbound = sub.add_parser("inbound", help="provider webhooks").add_subparsers(
        dest="inbound", required=True)
    p = inbound.add_parser("url", help="the URL a provider reports the workspace's events "
                           "to, with the workspace's secret for it")
    p.add_argument("--workspace", required=True)
    p.add_argument("--provider", required=True, help="the provider's name, as in its URL")
    p.set_defaults(func=cmd_inbound_url)

    reports = sub.add_parser("reports", help="delivery reports").add_subparsers(
        dest="reports", required=True)
    p = reports.add_parser("run", help="index, roll up and prune now (the worker does it "
                           "every minute)")
    p.set_defaults(func=cmd_reports_run)
