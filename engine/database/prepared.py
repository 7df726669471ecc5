"""The hot statements as named server-side statements on PostgreSQL: parsed and planned once
per connection instead of at every call.

A claim sent as text made PostgreSQL parse and plan, at every call, a statement that never
changes: most of its CPU (docs/performance.md, "Measurements behind the code's shape"). As
``EXECUTE`` of a statement prepared on that connection it costs half as much, and the
client sends and psycopg2 interpolates a far shorter string. Which statements a
connection holds is kept beside the connection object (a new
connection, after a reconnect, starts with none).

A pooler in transaction mode (PgBouncer's ``pool_mode = transaction``) may run a
statement on a server connection other than the one that prepared it: add
``prepare=false`` to ``HERALD_DATABASE_URL`` and every statement is sent as text. A
connection that has lost its statements all the same (``DISCARD ALL``) prepares them again.
"""

from __future__ import annotations

import functools
import itertools
import re
import threading
import weakref
from typing import Any

from peewee import Database, DatabaseError, PostgresqlDatabase

_held: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()
_PLACEHOLDER = re.compile(r"%s")
_NO_SUCH_STATEMENT = "26000"  # invalid_sql_statement_name


def enabled(db: Database) -> bool:
    """True on PostgreSQL unless the database URL said ``prepare=false``."""
    return isinstance(db, PostgresqlDatabase) and getattr(db, "herald_prepare", True)


def numbered(sql: str) -> str:
    """psycopg2's ``%s`` placeholders as PostgreSQL's ``$1, $2, ...``."""
    counter = itertools.count(1)
    return _PLACEHOLDER.sub(lambda _: f"${next(counter)}", sql)


def execute(db: Database, name: str, sql: str, params: tuple, prefix: str = "") -> Any:
    """Run ``sql`` (psycopg2 placeholders) with ``params`` as the statement ``name``, prepared on
    this connection the first time; ``prefix`` runs before it in the same round trip (a
    ``SET LOCAL``). Without prepared statements, the text itself is sent."""
    if not enabled(db):
        return db.execute_sql(prefix + sql, params)
    conn = db.connection()
    held = _held.get(conn)
    if held is None:
        with _lock:
            held = _held.setdefault(conn, set())
    call = _call(prefix, name, len(params))
    if name not in held:
        _prepare(db, held, name, sql)
    try:
        return db.execute_sql(call, params)
    except DatabaseError as exc:  # peewee's wrapper; psycopg2's own error is its ``orig``
        if getattr(getattr(exc, "orig", None), "pgcode", None) != _NO_SUCH_STATEMENT:
            raise
        # The connection lost the statement (DISCARD ALL by a pooler): nothing ran, so
        # prepare it again and run once more, unless the error aborted a transaction.
        held.discard(name)
        if db.in_transaction():
            raise
        _prepare(db, held, name, sql)
        return db.execute_sql(call, params)


def _prepare(db: Database, held: set[str], name: str, sql: str) -> None:
    db.execute_sql(f"PREPARE {name} AS {numbered(sql)}")
    held.add(name)


@functools.lru_cache(maxsize=64)
def _call(prefix: str, name: str, count: int) -> str:
    """The EXECUTE text for ``count`` parameters (the same few strings at every call)."""
    args = f" ({', '.join(['%s'] * count)})" if count else ""
    return f"{prefix}EXECUTE {name}{args}"
