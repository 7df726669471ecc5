"""The notification and attempt tables partitioned by month on PostgreSQL
(engine/database/partitions.py); SQLite keeps one table each."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from peewee import IntegrityError, SqliteDatabase

from engine.database import partitions
from engine.database.models import DeliveryAttempt, Notification, TrackingEvent
from engine.database.models.reports import NotificationLookup
from tests import factories
from tests.support.pg_schema import own_schema


@pytest.fixture
def pg(db):
    if isinstance(db, SqliteDatabase):
        assert not partitions.supported(db)
        assert partitions.convert(db) == []  # one table each, left as it is
        pytest.skip("partitions are PostgreSQL's")
    return db


def _at(year: int, month: int, day: int = 10) -> dt.datetime:
    return dt.datetime(year, month, day, 12, 0)


def test_both_tables_are_partitioned_with_months_ahead_and_a_default(pg):
    for table in partitions.TABLES:
        assert partitions.is_partitioned(pg, table), table
        found = partitions.partitions(pg, table)
        first, *months, default = found
        assert first[1] is None and first[2] is not None  # everything before the switch
        assert default[1:] == (None, None)
        assert [lo for _, lo, _ in months] == [
            partitions.add_months(first[2], n) for n in range(len(months))]
        assert len(months) >= 2
    assert partitions.convert(pg) == []  # done once


def test_the_scheduler_makes_the_months_ahead_and_rows_land_in_theirs(pg):
    ws = factories.workspace()
    made = partitions.ensure_months(pg, "notification", now=_at(2031, 11))
    assert made == ["notification_2031_11", "notification_2031_12", "notification_2032_01",
                    "notification_2032_02"]
    assert partitions.ensure_months(pg, "notification", now=_at(2031, 11)) == []
    row = factories.notification(ws, factories.email_payload(), created_at=_at(2032, 1))
    where = pg.execute_sql("SELECT tableoid::regclass::text FROM notification WHERE id = %s",
                           (row.id,)).fetchone()[0]
    assert where == "notification_2032_01"
    assert Notification.get_by_id(row.id).correlation_id == row.correlation_id
    for name in made:  # the other tests' months
        pg.execute_sql(f'DROP TABLE "{name}"')


def test_a_row_past_every_month_goes_to_the_default_partition(pg):
    ws = factories.workspace()
    row = factories.notification(ws, factories.email_payload(), created_at=_at(2090, 5))
    where = pg.execute_sql("SELECT tableoid::regclass::text FROM notification WHERE id = %s",
                           (row.id,)).fetchone()[0]
    assert where == "notification_default"
    # That month's partition cannot be made while the default holds its rows: left there.
    assert partitions.ensure_months(pg, "notification", now=_at(2090, 5), ahead=0) == []
    assert Notification.get_by_id(row.id).id == row.id


def test_an_idempotency_key_is_unique_per_workspace_across_partitions(pg):
    ws, other = factories.workspace(), factories.workspace()
    payload = factories.email_payload()
    factories.notification(ws, payload, idempotency_key="k", created_at=_at(2020, 1))
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    with pytest.raises(IntegrityError):  # another partition: the trigger refuses it
        factories.notification(ws, payload, idempotency_key="k", created_at=now)
    with pytest.raises(IntegrityError):  # the same partition: its own unique index
        factories.notification(ws, payload, idempotency_key="k", created_at=_at(2020, 2))
    factories.notification(other, payload, idempotency_key="k", created_at=now)
    factories.notification(ws, payload, created_at=now)  # without a key: not counted
    factories.notification(ws, payload, created_at=now)
    assert Notification.select().where(Notification.idempotency_key == "k").count() == 2


def test_deleting_a_notification_deletes_what_names_it(pg):
    ws = factories.workspace()
    row = factories.notification(ws, factories.email_payload())
    kept = factories.notification(ws, factories.email_payload())
    for notification in (row, kept):
        DeliveryAttempt.create(notification=notification.id, number=1, outcome="delivered")
        TrackingEvent.create(notification=notification.id, kind="open")
        NotificationLookup.create(workspace=ws.id, notification=notification.id, kind="c",
                                  term=notification.correlation_id,
                                  created_at=notification.created_at)
    Notification.delete().where(Notification.id == row.id).execute()
    for model in (DeliveryAttempt, TrackingEvent, NotificationLookup):
        assert [r.notification_id for r in model.select()] == [kept.id], model.__name__


def test_a_lookup_by_id_reads_each_partitions_primary_key(pg):
    ws = factories.workspace()
    row = factories.notification(ws, factories.email_payload())
    with pg.atomic():
        pg.execute_sql("SET LOCAL enable_seqscan = off")
        plan = " ".join(r[0] for r in pg.execute_sql(
            "EXPLAIN SELECT * FROM notification WHERE id = %s", (row.id,)).fetchall())
    assert "Seq Scan" not in plan and "Index Scan" in plan
    assert Notification.get_by_id(row.id).id == row.id
    assert Notification.get_or_none(Notification.id == uuid.uuid4()) is None


ROWS = 1_000_000


@pytest.fixture
def unpartitioned(pg, database_url):
    """The tables as the step before made them, 1,000,000 notifications and as many
    attempts, seeded in SQL, in a schema of their own."""
    from engine.database.migrations import MIGRATIONS

    with own_schema(pg, database_url, "conversion") as other:
        with other.atomic():
            for step in MIGRATIONS[:-1]:
                step(other)
        ws = factories.workspace()
        with other.atomic():  # foreign keys' triggers off while the rows go in
            other.execute_sql("SET LOCAL session_replication_role = replica")
            _seed(other, ws)
        other.execute_sql("ANALYZE")
        yield other, ws


def _seed(other, ws) -> None:
    """1,000,000 notifications over 11 days (one key in ten) and an attempt each."""
    other.execute_sql(
        "INSERT INTO notification (id, account_id, workspace_id, version_number, channel,"
        " status, is_test, correlation_id, delivery_id, payload, attempts, created_at,"
        " updated_at, idempotency_key) SELECT md5(i::text)::uuid, %s, %s, 1, 'email',"
        " 'delivered', false, 'c' || i, md5(i::text), '{}', 1,"
        " now() at time zone 'utc' - (i || ' seconds')::interval,"
        " now() at time zone 'utc', CASE WHEN i %% 10 = 0 THEN 'key-' || i END"
        " FROM generate_series(1, %s) AS i", (ws.account_id, ws.id, ROWS))
    other.execute_sql(
        "INSERT INTO delivery_attempt (notification_id, number, started_at, duration_ms,"
        " outcome) SELECT md5(i::text)::uuid, 1, now() at time zone 'utc'"
        " - (i || ' seconds')::interval, 5, 'delivered' FROM generate_series(1, %s) AS i",
        (ROWS,))


@pytest.mark.slow
@pytest.mark.timeout(900)  # the seed: a minute or two
def test_the_conversion_of_a_million_rows_loses_no_write_made_meanwhile(unpartitioned):
    import threading
    import time

    from engine.database.db import database

    db, ws = unpartitioned
    written: list[uuid.UUID] = []
    failures: list[BaseException] = []
    stop = threading.Event()

    def write() -> None:  # a send and its attempt, over and over, all along
        try:
            while not stop.is_set() or len(written) < 20:
                with database.atomic():
                    row = factories.notification(ws, factories.email_payload())
                    DeliveryAttempt.create(notification=row.id, number=1, outcome="sent")
                written.append(row.id)
        except BaseException as error:  # the assertion below reports it
            failures.append(error)
        finally:
            database.close()

    writer = threading.Thread(target=write)
    writer.start()
    deadline = time.monotonic() + 60
    while len(written) < 5 and not failures and time.monotonic() < deadline:
        time.sleep(0.01)  # the writer is under way before the conversion starts
    try:
        assert partitions.convert(db) == ["notification", "delivery_attempt"]
    finally:
        stop.set()
        writer.join(timeout=120)
    assert not writer.is_alive() and not failures, failures
    for table in partitions.TABLES:
        assert partitions.is_partitioned(db, table)
    assert Notification.select().count() == ROWS + len(written)
    assert DeliveryAttempt.select().count() == ROWS + len(written)
    assert Notification.select().where(Notification.id.in_(written)).count() == len(written)
    # Rows from before and after, by id; the keys still unique across partitions.
    first = uuid.UUID(str(db.execute_sql("SELECT md5('1')::uuid").fetchone()[0]))
    assert Notification.get_by_id(first).correlation_id == "c1"
    assert Notification.get_by_id(written[-1]).workspace_id == ws.id
    with pytest.raises(IntegrityError):
        factories.notification(ws, factories.email_payload(), idempotency_key="key-10")
    after = factories.notification(ws, factories.email_payload(), idempotency_key="new")
    assert Notification.get_by_id(after.id).idempotency_key == "new"
    Notification.delete().where(Notification.id == first).execute()  # its attempt with it
    assert not DeliveryAttempt.select().where(DeliveryAttempt.notification == first).exists()


@pytest.fixture
def months(pg, database_url):
    """A partitioned schema of its own (a drop there leaves the other tests' tables be),
    with the months of 2041 made."""
    from engine.database.migrations import upgrade

    with own_schema(pg, database_url, "months") as other:
        upgrade(other)
        for table in partitions.TABLES:
            partitions.ensure_months(other, table, now=_at(2041, 1), ahead=2)
        yield other


def _rolled(ws, day: dt.date) -> None:
    from engine.database.models.reports import ReportDay

    ReportDay.create(workspace=ws.id, day=day,
                     rolled_until=dt.datetime.combine(day, dt.time()) + dt.timedelta(days=1))


def test_a_whole_month_past_the_retention_goes_as_a_partition_drop(months):
    from engine.reports import whole_months

    ws = factories.workspace()
    payload = factories.email_payload()
    gone = factories.notification(ws, payload, created_at=_at(2041, 1, 5))
    test_send = factories.notification(ws, payload, created_at=_at(2041, 1, 6), is_test=True)
    late = factories.notification(ws, payload, created_at=_at(2041, 1, 31))
    kept = factories.notification(ws, payload, created_at=_at(2041, 2, 3))
    _rolled(ws, dt.date(2041, 1, 5))
    _rolled(ws, dt.date(2041, 1, 31))
    for row, started in ((gone, _at(2041, 1, 5)), (late, _at(2041, 2, 1)),
                         (kept, _at(2041, 2, 3))):
        DeliveryAttempt.create(notification=row.id, number=1, outcome="delivered",
                               started_at=started)
        TrackingEvent.create(notification=row.id, kind="open")
    cutoff = dt.datetime(2041, 4, 1)

    # February has a day not rolled up: it stays, and so does every month after it.
    assert whole_months.droppable(cutoff)[-1] == "notification_2041_01"
    assert whole_months.drop(cutoff, force=True, now=dt.datetime(2041, 6, 1)) >= 3

    names = [name for name, _, _ in partitions.partitions(months, "notification")]
    assert "notification_2041_01" not in names and "notification_2041_02" in names
    assert not months.table_exists("notification_2041_01")
    assert [r.id for r in Notification.select()] == [kept.id]
    assert {a.notification_id for a in DeliveryAttempt.select()} == {kept.id}
    assert {e.notification_id for e in TrackingEvent.select()} == {kept.id}
    assert test_send.id not in {r.id for r in Notification.select()}
    # January's attempts went whole; February's partition holds the late row's retry no
    # more (deleted with it) and keeps the kept one's.
    attempt_parts = [name for name, _, _ in partitions.partitions(months, "delivery_attempt")]
    assert "delivery_attempt_2041_01" not in attempt_parts
    assert "delivery_attempt_2041_02" in attempt_parts


def test_a_month_not_over_by_the_clock_stays_whatever_the_cutoff(months):
    from engine.reports import whole_months

    ws = factories.workspace()
    factories.notification(ws, factories.email_payload(), created_at=_at(2041, 1, 5))
    _rolled(ws, dt.date(2041, 1, 5))
    assert whole_months.drop(dt.datetime(2041, 4, 1), force=True,
                             now=dt.datetime(2041, 1, 20)) == 0
    assert Notification.select().count() == 1


def test_a_drop_interrupted_after_its_detach_is_finished_by_the_next(months):
    from engine.database import partition_drops
    from engine.reports import whole_months

    ws = factories.workspace()
    row = factories.notification(ws, factories.email_payload(), created_at=_at(2041, 1, 5))
    TrackingEvent.create(notification=row.id, kind="open")
    months.execute_sql("CREATE TABLE notification_2041_05 (id uuid)")  # by hand: stays
    with months.atomic():  # as a drop leaves it when it stops after the detach
        months.execute_sql("ALTER TABLE notification DETACH PARTITION notification_2041_01")
        months.execute_sql("COMMENT ON TABLE notification_2041_01 IS %s",
                           (partition_drops.MARK,))
    assert whole_months.drop(dt.datetime(2000, 1, 1)) == 1
    assert months.table_exists("notification_2041_05")
    assert not months.table_exists("notification_2041_01")
    assert TrackingEvent.select().count() == 0


def test_the_report_job_makes_the_months_ahead(months):
    from engine.reports import job

    for table in partitions.TABLES:  # as if the worker had not run for a while
        current = partitions.month_start(partitions.utcnow())
        for name, low, _ in partitions.partitions(months, table):
            if low is not None and low >= partitions.add_months(current, 1):
                months.execute_sql(f'DROP TABLE "{name}"')
    assert job.run_once()["partitions"] >= 2
    for table in partitions.TABLES:
        highs = [high for _, _, high in partitions.partitions(months, table) if high]
        assert max(highs) >= partitions.add_months(
            partitions.month_start(partitions.utcnow()), partitions.AHEAD + 1)
    assert job.run_once()["partitions"] == 0
