"""Step 13: notifications by correlation id, by index (`herald notifications show`)."""

from __future__ import annotations

from peewee import SqliteDatabase

from engine.store.migrations import MIGRATIONS, _correlation_id_index, current_version, upgrade
from engine.store.models import SchemaVersion

INDEX = "notification_correlation_id"
STEP = MIGRATIONS.index(_correlation_id_index) + 1


def _plan(db) -> str:
    query = "SELECT id FROM notification WHERE correlation_id = 'abc'"
    if isinstance(db, SqliteDatabase):
        return " ".join(str(row) for row in db.execute_sql(f"EXPLAIN QUERY PLAN {query}"))
    with db.atomic():
        db.execute_sql("SET LOCAL enable_seqscan = off")  # a tiny table: ask for the index
        return " ".join(row[0] for row in db.execute_sql(f"EXPLAIN {query}"))


def test_the_step_is_thirteen_and_lookups_use_its_index(db):
    assert STEP == 13
    assert INDEX in {i.name for i in db.get_indexes("notification")}
    assert INDEX in _plan(db)


def test_a_database_of_the_step_before_gets_the_index_and_one_made_by_hand_is_kept(db):
    db.execute_sql(f'DROP INDEX "{INDEX}"')
    SchemaVersion.delete().where(SchemaVersion.version >= STEP).execute()
    assert INDEX not in _plan(db)
    assert upgrade(db) == {"from": STEP - 1, "to": len(MIGRATIONS)}
    assert INDEX in {i.name for i in db.get_indexes("notification")}
    # Made by hand already, under another name: the step adds no second one.
    db.execute_sql(f'DROP INDEX "{INDEX}"')
    db.execute_sql('CREATE INDEX "by_hand" ON "notification" ("correlation_id")')
    SchemaVersion.delete().where(SchemaVersion.version >= STEP).execute()
    assert upgrade(db)["from"] == STEP - 1 and current_version(db) == len(MIGRATIONS)
    names = {i.name for i in db.get_indexes("notification")}
    assert "by_hand" in names and INDEX not in names
    assert "by_hand" in _plan(db)
    db.execute_sql('DROP INDEX "by_hand"')
    _correlation_id_index(db)  # as the other tests expect the schema
    assert INDEX in {i.name for i in db.get_indexes("notification")}
