"""`herald templates publish|restore|lock`: the version lifecycle."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from cli.common import CommandError, connect, emit, template
from config.settings import Settings


def _version_json(version) -> dict[str, Any]:
    return {
        "templateId": str(version.template_id),
        "versionNumber": version.number,
        "status": version.status,
        "locked": version.locked,
    }


def _lifecycle(action: Callable[[], Any]) -> Any:
    from engine.catalog.versions import VersionError
    from engine.database.db import database
    from engine.rendering import TemplateSyntaxError

    try:
        with database.atomic():
            return action()
    except (VersionError, TemplateSyntaxError) as err:
        raise CommandError(str(err)) from None


def cmd_templates_publish(args: argparse.Namespace, settings: Settings) -> None:
    from engine.catalog.versions import VersionError, current_draft, get_version, publish

    connect(settings)
    found = template(args.id)

    def act():
        if args.version is not None:
            version = get_version(found, args.version)
        else:
            version = current_draft(found)
            if version is None:
                raise VersionError(f"template {found.id} has no draft to publish")
        return publish(version)

    emit(_version_json(_lifecycle(act)))


def cmd_templates_restore(args: argparse.Namespace, settings: Settings) -> None:
    from engine.catalog.versions import restore

    connect(settings)
    found = template(args.id)
    version = _lifecycle(lambda: restore(found, args.version))
    emit({**_version_json(version), "restoredFrom": args.version})


def cmd_templates_lock(args: argparse.Namespace, settings: Settings) -> None:
    from engine.catalog.versions import lock

    connect(settings)
    found = template(args.id)
    emit(_version_json(_lifecycle(lambda: lock(found, args.version))))


def add_commands(sub: argparse._SubParsersAction) -> None:
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
