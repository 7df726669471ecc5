"""`herald data purge` and `herald data erase`: retention and erasure now, each printing
one JSON document of what it removed, or would (docs/operations.md, "Data retention")."""

from __future__ import annotations

import argparse

from cli.common import CommandError, connect, emit, workspace
from config.settings import Settings


def cmd_data_purge(args: argparse.Namespace, settings: Settings) -> None:
    from engine.catalog.keys import parse_time
    from engine.retention import purge

    connect(settings)
    as_of = None
    if args.as_of:
        try:
            as_of = parse_time(args.as_of)
        except ValueError:
            raise CommandError(f"--as-of {args.as_of}: not an RFC 3339 time "
                               "(2026-01-31T00:00:00Z)") from None
    found = workspace(args.workspace).id if args.workspace else None
    emit(purge.purge(found, as_of=as_of, dry_run=args.dry_run))


def cmd_data_erase(args: argparse.Namespace, settings: Settings) -> None:
    from engine.database.models import Workspace
    from engine.retention import erasure

    connect(settings)
    found = ([workspace(args.workspace)] if args.workspace else
             list(Workspace.select().order_by(Workspace.created_at, Workspace.id)))
    try:
        results = [erasure.erase(ws.id, args.recipient) for ws in found]
    except erasure.ErasureError as err:
        raise CommandError(f"{args.recipient!r}: {err}") from None
    totals = {key: sum(r[key] for r in results) for key in (results[0] if results else {})
              if key != "workspaceId"}
    emit({**totals, "workspaces": results})


def add_commands(sub: argparse._SubParsersAction) -> None:
    data = sub.add_parser("data", help="retention and erasure").add_subparsers(
        dest="data", required=True)
    p = data.add_parser("purge", help="purge what is past each workspace's retention now "
                        "(the worker does it daily)")
    p.add_argument("--workspace", help="only this workspace")
    p.add_argument("--as-of", help="an RFC 3339 time: purge as if it were then")
    p.add_argument("--dry-run", action="store_true", help="change nothing: say what it would")
    p.set_defaults(func=cmd_data_purge)
    p = data.add_parser("erase", help="erase one recipient's data now (every workspace, or "
                        "one); their suppression stays, as a keyed hash")
    p.add_argument("recipient", metavar="ADDRESS_OR_NUMBER")
    p.add_argument("--workspace", help="only this workspace")
    p.set_defaults(func=cmd_data_erase)
