"""runtime.configure over an earlier binding: the replaced database's connection is closed.

A connection left open on a database nothing names any more kept a SQLite file open in
the test process; with its locks lost (a descriptor closed elsewhere) another process took
the file for its own and reset the WAL under it (a later test then read stale pages)."""

from __future__ import annotations

from engine import runtime
from engine.database.db import database


def test_a_reconfigure_closes_this_threads_connection_to_the_replaced_database(settings):
    first = database.obj
    first.execute_sql("SELECT 1")
    assert not first.is_closed()
    second = runtime.configure(settings)
    assert database.obj is second and second is not first
    assert first.is_closed()
    assert second.execute_sql("SELECT 1").fetchone() == (1,)


def test_a_replaced_database_in_a_transaction_is_left_to_finish_it(settings):
    first = database.obj
    with first.atomic():
        first.execute_sql("SELECT 1")
        runtime.configure(settings)
        assert not first.is_closed()
    first.close()
