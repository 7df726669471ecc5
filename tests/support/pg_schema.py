"""A PostgreSQL schema of its own in the test database, the engine bound to it meanwhile:
for a test that needs the tables as an older release left them (before their partitioning,
say) while the session's own tables stay as the other tests expect them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from peewee import Database

from engine.database.db import database, make_database


@contextmanager
def own_schema(db: Database, database_url: str, name: str) -> Iterator[Database]:
    db.execute_sql(f"DROP SCHEMA IF EXISTS {name} CASCADE")
    db.execute_sql(f"CREATE SCHEMA {name}")
    separator = "&" if "?" in database_url else "?"
    other = make_database(f"{database_url}{separator}options=-csearch_path%3D{name}")
    previous = database.obj
    database.initialize(other)
    try:
        yield other
    finally:
        other.close_all()
        database.initialize(previous)
        db.execute_sql(f"DROP SCHEMA IF EXISTS {name} CASCADE")
