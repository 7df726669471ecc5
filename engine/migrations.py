"""Schema migrations: an ordered list of steps, each applied once, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable

from peewee import Database

from engine.models import ALL_MODELS, SchemaVersion


def _initial(db: Database) -> None:
    db.create_tables(ALL_MODELS, safe=True)


# Append new steps; never edit a released one. Each runs inside one transaction.
MIGRATIONS: list[Callable[[Database], None]] = [_initial]


def current_version(db: Database) -> int:
    if not db.table_exists(SchemaVersion._meta.table_name):
        return 0
    row = SchemaVersion.select(SchemaVersion.version).order_by(SchemaVersion.version.desc()).first()
    return row.version if row else 0


def upgrade(db: Database) -> dict[str, int]:
    """Apply the steps not yet applied; running it again is a no-op."""
    before = current_version(db)
    for number, step in enumerate(MIGRATIONS, start=1):
        if number <= before:
            continue
        with db.atomic():
            step(db)
            SchemaVersion.create(version=number)
    return {"from": before, "to": len(MIGRATIONS)}
