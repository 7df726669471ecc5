"""`herald`: JSON on stdout for what it creates, errors on stderr with a non-zero exit.

Each command group has its module: cli/provisioning.py (db, apply, export), cli/keys.py
(keys, secret), cli/templates.py, cli/users.py (the web application's people),
cli/senders.py (senders, dkim), cli/processes.py (serve, worker, dev), cli/inbound.py
(bounces, inbound, reports), cli/notifications.py (notifications show, queue), cli/data.py
(data purge, erase).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence

import peewee

from cli import (
    data,
    inbound,
    keys,
    notifications,
    processes,
    provisioning,
    senders,
    templates,
    users,
)
from cli.common import CommandError, connect, one_line
from config.redaction import install_log_masking, mask_secrets
from config.settings import ConfigError, load_settings
from engine.errors import UndecryptableSecret
from engine.plugins.manager import check_providers

__all__ = ["CommandError", "build_parser", "connect", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="herald", description="Herald notification service")
    sub = parser.add_subparsers(dest="command", required=True)
    for group in (provisioning, keys, templates, users, senders, processes,
                  inbound, notifications, data):
        group.add_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    install_log_masking()
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings()
        check_providers(settings)
        args.func(args, settings)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader stopped early (`herald export | head`): end quietly, with the status a
        # shell gives a process the closed pipe stopped. Python would otherwise hit the
        # pipe again flushing stdout at exit, and print that too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except ConfigError as err:
        print(f"herald: configuration error: {err}", file=sys.stderr)
        return 2
    except CommandError as err:
        print(f"herald: {mask_secrets(str(err))}", file=sys.stderr)
        return 1
    except UndecryptableSecret:
        # The database was sealed with another key: the setting is at fault, not the data.
        print("herald: configuration error: HERALD_SECRET_KEY: a stored secret cannot be "
              "decrypted with it (is it the key the database's secrets were sealed with?)",
              file=sys.stderr)
        return 2
    except peewee.DatabaseError as err:
        # Lost mid-command, or a schema `herald db upgrade` has not made yet.
        print(f"herald: database error: {mask_secrets(one_line(err))}", file=sys.stderr)
        return 1
    return 0
