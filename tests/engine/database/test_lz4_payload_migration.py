"""Step 18: a notification's payload compressed with lz4 where PostgreSQL has it; rows
written before keep pglz and read as they were written."""

from __future__ import annotations

import pytest
from peewee import SqliteDatabase

from engine.database import partitions
from engine.database.migrations import MIGRATIONS, _lz4_payloads, upgrade
from engine.database.models import Notification, SchemaVersion
from tests import factories
from tests.support.pg_schema import own_schema

STEP = MIGRATIONS.index(_lz4_payloads) + 1


def _method(db, notification_id) -> str | None:
    """How PostgreSQL stored the row's payload (None: not compressed)."""
    return db.execute_sql("SELECT pg_column_compression(payload) FROM notification "
                          "WHERE id = %s", (notification_id,)).fetchone()[0]


def _lz4_available(db) -> bool:
    return db.execute_sql("SELECT 'lz4' = ANY(enumvals) FROM pg_settings "
                          "WHERE name = 'default_toast_compression'").fetchone()[0]


@pytest.fixture
def before(db, database_url):
    """A database of the step before: on PostgreSQL a schema of its own made by the steps
    before it (the session's tables are partitioned since, by a later step)."""
    if isinstance(db, SqliteDatabase):
        SchemaVersion.delete().where(SchemaVersion.version >= STEP).execute()
        yield db
        return
    with own_schema(db, database_url, "before_lz4") as old:
        with old.atomic():
            for number, step in enumerate(MIGRATIONS[:STEP - 1], start=1):
                step(old)
                SchemaVersion.create(version=number)
        yield old


def test_a_database_of_the_step_before_writes_lz4_after_it_and_reads_both(before):
    db = before
    postgres = not isinstance(db, SqliteDatabase)
    if postgres:  # pglz, what PostgreSQL's default gave a database of the step before
        db.execute_sql('ALTER TABLE "notification" ALTER COLUMN "payload" SET COMPRESSION '
                       "pglz")
    ws = factories.workspace()
    # A receipt's payload: past what PostgreSQL keeps inline, and compressible.
    payload = factories.email_payload(html="<p>Thanks for your order A-1001.</p>" * 80)
    before = factories.notification(ws, payload)

    assert upgrade(db) == {"from": STEP - 1, "to": len(MIGRATIONS)}

    after = factories.notification(ws, payload)
    assert Notification.get_by_id(before.id).payload == payload
    assert Notification.get_by_id(after.id).payload == payload
    if postgres:  # SQLite compresses nothing: the step only has to leave it readable
        assert _method(db, before.id) == "pglz"
        assert _method(db, after.id) == ("lz4" if _lz4_available(db) else "pglz")
    if postgres:  # partitioned by the last step: the months after it compress with lz4 too
        assert partitions.is_partitioned(db, "notification")
        later = factories.notification(ws, payload, created_at=partitions.add_months(
            partitions.month_start(partitions.utcnow()), partitions.AHEAD))
        assert _method(db, later.id) == ("lz4" if _lz4_available(db) else "pglz")
    _lz4_payloads(db)  # again: harmless
    assert Notification.get_by_id(after.id).payload == payload
