"""What every `herald` command shares: its error type, the database connection, JSON output
and the lookups of ids given on the command line."""

from __future__ import annotations

import json
import sys
import uuid
from typing import Any

import peewee

from config.settings import Settings


class CommandError(Exception):
    """A failure to report on stderr (exit 1), never a traceback."""


def one_line(err: BaseException) -> str:
    """A driver's message on one line (libpq's spans several, with tabs)."""
    return " ".join(str(err).split())


def connect(settings: Settings) -> peewee.Database:
    """Bind and open the database; one that cannot be reached is a CommandError, not a trace."""
    from engine import runtime

    try:
        db = runtime.configure(settings)  # makes a SQLite file's folder
        db.connect(reuse_if_open=True)
    except (peewee.DatabaseError, OSError) as err:
        raise CommandError(f"cannot reach the database: {one_line(err)} "
                           "(check HERALD_DATABASE_URL)") from None
    return db


def emit(document: Any) -> None:
    json.dump(document, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def parse_uuid(value: str, what: str) -> uuid.UUID:
    """Ids are checked here so that no database ever sees a malformed one."""
    try:
        return uuid.UUID(value)
    except ValueError:
        raise CommandError(f"no {what} {value} (not a UUID)") from None


def workspace(workspace_id: str):
    from engine.database.models import Workspace

    found = Workspace.get_or_none(Workspace.id == parse_uuid(workspace_id, "workspace"))
    if found is None:
        raise CommandError(f"no workspace {workspace_id}")
    return found


def template(template_id: str):
    from engine.database.models import Template

    found = Template.get_or_none(Template.id == parse_uuid(template_id, "template"))
    if found is None:
        raise CommandError(f"no template {template_id}")
    return found
