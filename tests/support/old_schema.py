"""A SQLite database as an older release left it, bound in place of the test's own: the
first migration step's tables, undone by ``statements``, and every step before ``step``
recorded as applied. The migration tests then run ``upgrade`` on it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from peewee import Database, SqliteDatabase

from engine.database.db import database
from engine.database.migrations import MIGRATIONS
from engine.database.models import SchemaVersion


@contextmanager
def database_before(step: Callable[[Database], None], folder: Path,
                    *statements: str) -> Iterator[SqliteDatabase]:
    old = SqliteDatabase(str(folder / "old.sqlite3"), pragmas={"foreign_keys": 1})
    previous = database.obj
    database.initialize(old)
    try:
        MIGRATIONS[0](old)
        for statement in statements:
            old.execute_sql(statement)
        for number in range(1, MIGRATIONS.index(step) + 1):
            SchemaVersion.create(version=number)
        yield old
    finally:
        database.initialize(previous)
        old.close()
