"""`herald notifications show ID|CORRELATION_ID` and `herald queue`: one notification end to
end, and the delivery backlog (docs/operations.md, "Following a notification")."""

from __future__ import annotations

import argparse

from redis.exceptions import RedisError

from cli.common import CommandError, connect, emit, one_line
from config.redaction import mask_secrets
from config.settings import Settings


def cmd_show(args: argparse.Namespace, settings: Settings) -> None:
    from engine.reports.trace import find_all, trace

    connect(settings)
    found = find_all(args.ident)
    if not found:
        raise CommandError(f"no notification with id or correlation id {args.ident!r}")
    out = trace(found[0])
    if len(found) > 1:  # a caller reused a correlation id: the newest, and the others' ids
        out["sameCorrelationId"] = [str(n.id) for n in found[1:]]
    emit(out)


def cmd_queue(args: argparse.Namespace, settings: Settings) -> None:
    from engine.worker.queue_status import queue_status

    if not settings.redis_url:
        raise CommandError("HERALD_REDIS_URL is not set: the queue lives in Redis")
    connect(settings)
    try:
        emit(queue_status())
    except RedisError as err:
        raise CommandError(f"cannot reach Redis: {mask_secrets(one_line(err))}") from None


def add_commands(sub: argparse._SubParsersAction) -> None:
    notifications = sub.add_parser("notifications", help="follow one notification").add_subparsers(
        dest="notifications", required=True)
    p = notifications.add_parser("show", help="a notification, its attempts and events, as JSON")
    p.add_argument("ident", metavar="ID|CORRELATION_ID")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("queue", help="queue depth, retries, workers and recent failures")
    p.set_defaults(func=cmd_queue)
