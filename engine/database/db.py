"""One database handle for the process, bound at start-up from HERALD_DATABASE_URL."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from urllib.parse import parse_qs, unquote, urlsplit

from peewee import Database, DatabaseProxy, SqliteDatabase
from playhouse.pool import PooledDatabase, PooledPostgresqlDatabase

from config.url_settings import postgres_hosts

database = DatabaseProxy()


def make_database(url: str) -> Database:
    """Build (not connect) a peewee database for a sqlite:/// or postgresql:// URL."""
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        path = unquote(parts.path[1:] if parts.path.startswith("/") else parts.path)
        if url.startswith("sqlite:////"):
            path = "/" + path.lstrip("/")
        if path and path != ":memory:":
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        # WAL lets the API read while a worker writes; busy_timeout turns lock contention
        # between processes into a short wait instead of an error.
        return SqliteDatabase(
            path or ":memory:",
            pragmas={
                "journal_mode": "wal",
                "foreign_keys": 1,
                "busy_timeout": 10000,
                "synchronous": "normal",
            },
            timeout=10,
            # UPDATE ... RETURNING lets a worker claim and read a row in one statement.
            returning_clause=sqlite3.sqlite_version_info >= (3, 35),
        )
    if parts.scheme in ("postgres", "postgresql"):
        options = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        # prepare=false: no named server-side statements (a pooler in transaction mode).
        prepare = options.pop("prepare", "true").lower() not in ("false", "0", "no", "off")
        # One host or libpq's list (pg-a:5432,pg-b:5432 with target_session_attrs): a
        # failover setup's primary is whichever host takes writes (docs/operations.md).
        hosts, ports = postgres_hosts(parts.netloc)
        db = PooledPostgresqlDatabase(
            unquote(parts.path.lstrip("/")) or "postgres",
            user=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            host=hosts or "127.0.0.1",
            port=int(ports) if ports and ports.isdigit() else ports or 5432,  # one, or a list
            max_connections=int(options.pop("max_connections", 20)),
            stale_timeout=300,
            **options,
        )
        db.herald_prepare = prepare  # read by engine/database/prepared.py
        return db
    raise ValueError(f"unsupported database URL scheme: {parts.scheme!r}")


def release_connection() -> None:
    """Give this thread's pooled connection back between deliveries: a worker's delivery
    slots outnumber the pool's connections, and hold one only while they use it. A SQLite
    connection (no pool) stays open for the thread."""
    db = database.obj
    if isinstance(db, PooledDatabase) and not db.is_closed() and not db.in_transaction():
        with contextlib.suppress(Exception):
            db.close()


def wait_for_pooled_connections(seconds: float) -> None:
    """A thread that finds every pooled connection in use waits up to ``seconds`` for one
    (peewee raises at once by default); set by the worker, whose slots share the pool."""
    db = database.obj
    if isinstance(db, PooledDatabase) and not db._wait_timeout:
        db._wait_timeout = seconds


def drop_connection() -> None:
    """Close this thread's connection after the database went away: peewee would hand the
    dead one to the next query. A broken connection may refuse to close; that is fine."""
    if not database.is_closed():
        with contextlib.suppress(Exception):
            database.close()


def bind_database(url: str) -> Database:
    """Point the shared proxy at the database named by ``url`` and return it."""
    db = make_database(url)
    database.initialize(db)
    return db
