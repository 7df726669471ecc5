"""`herald`: JSON on stdout for what it creates, errors on stderr with a non-zero exit."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import peewee
import yaml

from config.settings import ConfigError, Settings, load_settings
from engine.errors import UndecryptableSecret


class CommandError(Exception):
    """A failure to report on stderr (exit 1), never a traceback."""


def _one_line(err: BaseException) -> str:
    """A driver's message on one line (libpq's spans several, with tabs)."""
    return " ".join(str(err).split())


def connect(settings: Settings) -> peewee.Database:
    """Bind and open the database; one that cannot be reached is a CommandError, not a trace."""
    from engine import runtime

    try:
        db = runtime.configure(settings)  # makes a SQLite file's folder
        db.connect(reuse_if_open=True)
    except (peewee.DatabaseError, OSError) as err:
        raise CommandError(f"cannot reach the database: {_one_line(err)}") from None
    return db


def _emit(document: Any) -> None:
    json.dump(document, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def cmd_db_upgrade(args: argparse.Namespace, settings: Settings) -> None:
    from engine.store.migrations import upgrade

    _emit({"schema": upgrade(connect(settings))})


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
        _emit(apply_document(doc).as_json())
    except ApplyError as err:
        raise CommandError("apply refused, nothing was written:\n  " + "\n  ".join(
            err.problems)) from None


def cmd_export(args: argparse.Namespace, settings: Settings) -> None:
    from engine.provisioning.exporting import export_document

    connect(settings)
    if args.workspace:
        _uuid(args.workspace, "workspace")
    doc = export_document(args.workspace)
    if args.workspace and not doc["accounts"]:
        raise CommandError(f"no workspace {args.workspace}")
    if args.format == "yaml":
        sys.stdout.write(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    else:
        _emit(doc)


def _uuid(value: str, what: str) -> uuid.UUID:
    """Ids are checked here so that no database ever sees a malformed one."""
    try:
        return uuid.UUID(value)
    except ValueError:
        raise CommandError(f"no {what} {value} (not a UUID)") from None


def _workspace(workspace_id: str):
    from engine.store.models import Workspace

    found = Workspace.get_or_none(Workspace.id == _uuid(workspace_id, "workspace"))
    if found is None:
        raise CommandError(f"no workspace {workspace_id}")
    return found


def _template(template_id: str):
    from engine.store.models import Template

    found = Template.get_or_none(Template.id == _uuid(template_id, "template"))
    if found is None:
        raise CommandError(f"no template {template_id}")
    return found


def cmd_keys_create(args: argparse.Namespace, settings: Settings) -> None:
    from engine.catalog.keys import KeyLifecycleError, create_key, describe, parse_time
    from engine.provisioning import NAME_RULE, valid_name

    if not valid_name(args.name):  # apply's rule: what export prints of the key applies again
        raise CommandError(f"--name: {NAME_RULE}")
    connect(settings)
    try:
        expires = parse_time(args.expires_at) if args.expires_at else None
    except ValueError:
        raise CommandError(f"--expires-at: not an RFC 3339 time: {args.expires_at}") from None
    try:
        key, value = create_key(_workspace(args.workspace), args.name, expires)
    except KeyLifecycleError as err:
        raise CommandError(str(err)) from None
    _emit(describe(key, value))


def cmd_keys_revoke(args: argparse.Namespace, settings: Settings) -> None:
    from engine.catalog.keys import describe, revoke_key
    from engine.store.models import ApiKey

    connect(settings)
    key = ApiKey.get_or_none(ApiKey.id == _uuid(args.id, "API key"))
    if key is None:
        raise CommandError(f"no API key {args.id}")
    _emit(describe(revoke_key(key)))


def cmd_secret_rotate(args: argparse.Namespace, settings: Settings) -> None:
    from engine.store import secrets

    connect(settings)
    workspace = _workspace(args.workspace)
    # Takes effect at once: every attempt, pending retries included, reads the current secret.
    workspace.signing_secret = secrets.new_signing_secret()
    workspace.save()
    _emit({"secret": workspace.signing_secret})


def _version_json(version) -> dict[str, Any]:
    return {
        "templateId": str(version.template_id),
        "versionNumber": version.number,
        "status": version.status,
        "locked": version.locked,
    }


def _lifecycle(action: Callable[[], Any]) -> Any:
    from engine.catalog.versions import VersionError
    from engine.rendering import TemplateSyntaxError
    from engine.store.db import database

    try:
        with database.atomic():
            return action()
    except (VersionError, TemplateSyntaxError) as err:
        raise CommandError(str(err)) from None


def cmd_templates_publish(args: argparse.Namespace, settings: Settings) -> None:
    from engine.catalog.versions import VersionError, current_draft, get_version, publish

    connect(settings)
    template = _template(args.id)

    def act():
        if args.version is not None:
            version = get_version(template, args.version)
        else:
            version = current_draft(template)
            if version is None:
                raise VersionError(f"template {template.id} has no draft to publish")
        return publish(version)

    _emit(_version_json(_lifecycle(act)))


def cmd_templates_restore(args: argparse.Namespace, settings: Settings) -> None:
    from engine.catalog.versions import restore

    connect(settings)
    template = _template(args.id)
    version = _lifecycle(lambda: restore(template, args.version))
    _emit({**_version_json(version), "restoredFrom": args.version})


def cmd_templates_lock(args: argparse.Namespace, settings: Settings) -> None:
    from engine.catalog.versions import lock

    connect(settings)
    template = _template(args.id)
    _emit(_version_json(_lifecycle(lambda: lock(template, args.version))))


def cmd_serve(args: argparse.Namespace, settings: Settings) -> None:
    from cli.serve import exposure, serve

    if reason := exposure(settings, args.host):
        raise CommandError(f"refusing to serve on {args.host} outside production: {reason} "
                           "(or pass --host 127.0.0.1)")
    serve(settings, host=args.host, port=args.port or settings.port, workers=args.workers)


def cmd_worker(args: argparse.Namespace, settings: Settings) -> None:
    from engine.delivery.worker import run_worker

    if not settings.redis_url:
        raise CommandError("HERALD_REDIS_URL is not set (herald dev starts one for you)")
    # Checked here so an unreachable database stops the command with one clear line.
    connect(settings).close()
    raise SystemExit(run_worker(settings, processes=args.processes, burst=args.burst,
                                fork=args.fork))


def cmd_dev(args: argparse.Namespace, settings: Settings) -> None:
    from cli.dev import run_dev

    raise SystemExit(run_dev(settings, port=args.port))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="herald", description="Herald notification service")
    sub = parser.add_subparsers(dest="command", required=True)

    db = sub.add_parser("db", help="database schema").add_subparsers(dest="db", required=True)
    db.add_parser("upgrade", help="create or migrate the schema").set_defaults(
        func=cmd_db_upgrade)

    p = sub.add_parser("apply", help="create or update from a YAML or JSON file")
    p.add_argument("file", help="path, or - for standard input")
    p.set_defaults(func=cmd_apply)

    p = sub.add_parser("export", help="print the apply format back")
    p.add_argument("--workspace", help="only this workspace (and its account)")
    p.add_argument("--format", choices=("json", "yaml"), default="json")
    p.set_defaults(func=cmd_export)

    keys = sub.add_parser("keys", help="API keys").add_subparsers(dest="keys", required=True)
    p = keys.add_parser("create")
    p.add_argument("--workspace", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--expires-at")
    p.set_defaults(func=cmd_keys_create)
    p = keys.add_parser("revoke")
    p.add_argument("id")
    p.set_defaults(func=cmd_keys_revoke)

    secret = sub.add_parser("secret", help="webhook signing secret").add_subparsers(
        dest="secret", required=True)
    p = secret.add_parser("rotate")
    p.add_argument("--workspace", required=True)
    p.set_defaults(func=cmd_secret_rotate)

    templates = sub.add_parser("templates", help="version lifecycle").add_subparsers(
        dest="templates", required=True)
    p = templates.add_parser("publish", help="make the draft live")
    p.add_argument("id")
    p.add_argument("--version", type=int, help="the draft's number (default: the draft)")
    p.set_defaults(func=cmd_templates_publish)
    for name, func, text in (
        ("restore", cmd_templates_restore, "new draft from a published version"),
        ("lock", cmd_templates_lock, "keep a version whatever the retention"),
    ):
        p = templates.add_parser(name, help=text)
        p.add_argument("id")
        p.add_argument("--version", type=int, required=True)
        p.set_defaults(func=func)

    p = sub.add_parser("serve", help="the production API server (gunicorn)")
    p.add_argument("--host", default="0.0.0.0")
    p.add_argument("--port", type=int)
    p.add_argument("--workers", type=int, default=2)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("worker", help="RQ workers with the scheduler")
    p.add_argument("--burst", action="store_true", help="exit when the queue is empty")
    p.add_argument("--processes", type=int, default=1)
    p.add_argument("--fork", action="store_true",
                   help="fork a work horse per job (default: run jobs in the worker process)")
    p.set_defaults(func=cmd_worker)

    p = sub.add_parser("dev", help="everything on one machine with embedded defaults")
    p.add_argument("--port", type=int)
    p.set_defaults(func=cmd_dev)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings()
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
        print(f"herald: {err}", file=sys.stderr)
        return 1
    except UndecryptableSecret:
        # The database was sealed with another key: the setting is at fault, not the data.
        print("herald: configuration error: HERALD_SECRET_KEY: a stored secret cannot be "
              "decrypted with it (is it the key the database's secrets were sealed with?)",
              file=sys.stderr)
        return 2
    except peewee.DatabaseError as err:
        # Lost mid-command, or a schema `herald db upgrade` has not made yet.
        print(f"herald: database error: {_one_line(err)}", file=sys.stderr)
        return 1
    return 0
