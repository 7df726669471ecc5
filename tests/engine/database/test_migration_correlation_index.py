"""Step 13: notifications by correlation id, by index (`herald notifications show`)."""

from __future__ import annotations

from peewee import SqliteDatabase

from engine.database import partitions
from engine.database.migrations import MIGRATIONS, _correlation_id_index, current_version, upgrade
from engine.database.models import SchemaVersion

INDEX = "notification_correlation_id"
STEP = MIGRATIONS.index(_correlation_id_index) + 1


def _plan(db) -> str:
    query = "SELECT id FROM notification WHERE correlation_id = 'abc'"
    if isinstance(db, SqliteDatabase):
        return " ".join(str(row) for row in db.execute_sql(f"EXPLAIN QUERY PLAN {query}"))
    with db.atomic():
        db.execute_sql("SET LOCAL enable_seqscan = off")  # a tiny table: ask for the index
        return " ".join(row[0] for row in db.execute_sql(f"EXPLAIN {query}"))


def _uses(db, index: str) -> bool:
    """Whether the lookup's plan reads ``index``, or on a partitioned table one of the
    partitions' indexes made by it (each named after its partition)."""
    names = {index}
    if not isinstance(db, SqliteDatabase):
        names |= {name for (name,) in db.execute_sql(
            "SELECT inhrelid::regclass::text FROM pg_inherits WHERE inhparent = "
            "to_regclass(%s)", (f'"{index}"',)).fetchall()}
    plan = _plan(db)
    return any(name in plan for name in names)


def _names(db) -> set[str]:
    """The table's indexes; on PostgreSQL, where it is partitioned by month, its own
    (partitioned) ones and those of its first partition (the table before the conversion,
    whose indexes it kept) too."""
    if isinstance(db, SqliteDatabase):
        return {i.name for i in db.get_indexes("notification")}
    tables = ['"notification"'] + [f'"{name}"' for name, low, high
                                   in partitions.partitions(db, "notification")[:1]
                                   if low is None and high is not None]
    return {name for table in tables for (name,) in db.execute_sql(
        "SELECT indexrelid::regclass::text FROM pg_index WHERE indrelid = to_regclass(%s)",
        (table,)).fetchall()}


def test_the_step_is_thirteen_and_lookups_use_its_index(db):
    assert STEP == 13
    assert INDEX in _names(db)
    assert _uses(db, INDEX)


def test_a_database_of_the_step_before_gets_the_index_and_one_made_by_hand_is_kept(db):
    if partitions.supported(db):  # partitioned since (the step never meets that table)
        _every_partition_is_read_by_correlation_id(db)
        return
    db.execute_sql(f'DROP INDEX "{INDEX}"')
    SchemaVersion.delete().where(SchemaVersion.version >= STEP).execute()
    assert not _uses(db, INDEX)
    assert upgrade(db) == {"from": STEP - 1, "to": len(MIGRATIONS)}
    assert INDEX in _names(db)
    # Made by hand already, under another name: the step adds no second one.
    db.execute_sql(f'DROP INDEX "{INDEX}"')
    db.execute_sql('CREATE INDEX "by_hand" ON "notification" ("correlation_id")')
    SchemaVersion.delete().where(SchemaVersion.version >= STEP).execute()
    assert upgrade(db)["from"] == STEP - 1 and current_version(db) == len(MIGRATIONS)
    names = _names(db)
    assert "by_hand" in names and INDEX not in names
    assert _uses(db, "by_hand")
    db.execute_sql('DROP INDEX "by_hand"')
    _correlation_id_index(db)  # as the other tests expect the schema
    assert INDEX in _names(db)


def _every_partition_is_read_by_correlation_id(db) -> None:
    """On PostgreSQL the table is partitioned by month since a later step: each partition
    has an index on correlation_id (its own, made with it), and the lookup reads them."""
    names = [name for name, _, _ in partitions.partitions(db, "notification")]
    assert len(names) >= 3
    for name in names:
        assert any(i.columns[:1] == ["correlation_id"] for i in db.get_indexes(name)), name
    assert "Seq Scan" not in _plan(db)
