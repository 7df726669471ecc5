"""`herald db upgrade`, `herald apply FILE` and `herald export`: the schema, and tenants and
templates as code."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import peewee
import yaml

from cli.common import CommandError, connect, emit, one_line, parse_uuid
from config.settings import Settings


def cmd_db_upgrade(args: argparse.Namespace, settings: Settings) -> None:
    from engine.database.migrations import upgrade

    emit({"schema": upgrade(_connect_within(settings, args.wait))})


def cmd_db_wait(args: argparse.Namespace, settings: Settings) -> None:
    """Wait until the schema is this release's, so a container started beside the one-off
    migration (compose, a Kubernetes init container) begins only once it has run."""
    from engine.database.migrations import MIGRATIONS, current_version

    deadline = time.monotonic() + max(0.0, args.timeout)
    db = _connect_within(settings, args.timeout)
    while True:
        try:
            step = current_version(db)
        except peewee.DatabaseError as err:
            raise CommandError(f"database error: {one_line(err)}") from None
        if step >= len(MIGRATIONS):
            emit({"schema": step})
            return
        if time.monotonic() >= deadline:
            raise CommandError(f"the schema is at step {step} of {len(MIGRATIONS)} after "
                               f"{args.timeout:g} s: run `herald db upgrade`")
        time.sleep(0.5)


def _connect_within(settings: Settings, seconds: float) -> peewee.Database:
    """Connect, retrying for `seconds` while the database does not answer yet (a database
    container that is still starting); then the usual one-line error."""
    deadline = time.monotonic() + max(0.0, seconds)
    while True:
        try:
            return connect(settings)
        except CommandError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.5)


def _load_file(path: str) -> Any:
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise CommandError(f"cannot read {path}: {err.strerror}") from None
    try:
        # YAML is a superset of JSON, so one loader reads both formats.
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise CommandError(f"{path} is neither valid YAML nor JSON: {err}") from None


def cmd_apply(args: argparse.Namespace, settings: Settings) -> None:
    from engine.provisioning import ApplyError, apply_document

    doc = _load_file(args.file)
    connect(settings)
    try:
        emit(apply_document(doc, production=settings.production).as_json())
    except ApplyError as err:
        raise CommandError("apply refused, nothing was written:\n  " + "\n  ".join(
            err.problems)) from None


def cmd_export(args: argparse.Namespace, settings: Settings) -> None:
    from engine.provisioning.exporting import export_with_references

    connect(settings)
    if args.workspace:
        parse_uuid(args.workspace, "workspace")
    doc, needed = export_with_references(args.workspace)
    if args.workspace and not doc["accounts"]:
        raise CommandError(f"no workspace {args.workspace}")
    names = list(dict.fromkeys(n["variable"] for n in needed))
    if names:
        # Names only, never a value: the operator supplies them to `apply` from elsewhere.
        print("herald: export: credentials are written as references; set "
              f"{', '.join(names)} in the environment of `herald apply`", file=sys.stderr)
    if args.format == "yaml":
        sys.stdout.write(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    else:
        emit(doc)


def add_commands(sub: argparse._SubParsersAction) -> None:
    db = sub.add_parser("db", help="database schema").add_subparsers(dest="db", required=True)
    p = db.add_parser("upgrade", help="create or migrate the schema")
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                   help="retry this long while the database does not answer (default 0)")
    p.set_defaults(func=cmd_db_upgrade)
    p = db.add_parser("wait", help="wait until `db upgrade` has brought the schema up to date")
    p.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS")
    p.set_defaults(func=cmd_db_wait)

    p = sub.add_parser("apply", help="create or update from a YAML or JSON file")
    p.add_argument("file", help="path, or - for standard input")
    p.set_defaults(func=cmd_apply)

    p = sub.add_parser("export", help="print the apply format back")
    p.add_argument("--workspace", help="only this workspace (and its account)")
    p.add_argument("--format", choices=("json", "yaml"), default="json")
    p.set_defaults(func=cmd_export)
