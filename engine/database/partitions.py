"""Monthly partitions of the notification and attempt tables on PostgreSQL (SQLite keeps
one table each): docs/operations.md, "Partitions by month".

The conversion copies nothing. The existing table becomes the first partition, holding
every row before a month boundary two months ahead, proven by a CHECK constraint added
NOT VALID (a moment's lock) and validated apart (a scan that lets writes go on); the
swap that renames it, makes the partitioned table of the same name and attaches it is
one short transaction of catalog changes, retried while another transaction holds the
table. Each step is its own transaction, so an interrupted conversion goes on at the
next upgrade.

What a partitioned table cannot keep, and what stands in for it (decisions, with why, in
docs/architecture.md): a unique index must include the partition key, so each partition
keeps its own (``id``, the Idempotency-Key per workspace) and a trigger makes the key
unique across partitions; a foreign key must reference such an index, so the four tables
whose rows name a notification lose theirs and a trigger deletes their rows with it.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import time

from peewee import Database, DatabaseError, SqliteDatabase

log = logging.getLogger("herald.store")

# Each partitioned table and its partition key: when its row was accepted (started).
TABLES = {"notification": "created_at", "delivery_attempt": "started_at"}
# The tables whose rows name a notification (notification_id): their foreign keys go.
CHILDREN = ("delivery_attempt", "tracking_event", "notification_event", "notification_lookup")
AHEAD = 3  # months made ahead of the current one
LOCK_TIMEOUT = "2s"  # a DDL statement waits this long for the table, then tries again
TRIES = 30
_BOUND = re.compile(r"'(\d{4}-\d{2}-\d{2})[ T0-9:.]*'")

_FUNCTIONS = """
CREATE OR REPLACE FUNCTION herald_notification_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  -- What ON DELETE CASCADE did before the table was partitioned.
  DELETE FROM delivery_attempt WHERE notification_id = OLD.id;
  DELETE FROM tracking_event WHERE notification_id = OLD.id;
  DELETE FROM notification_event WHERE notification_id = OLD.id;
  DELETE FROM notification_lookup WHERE notification_id = OLD.id;
  RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION herald_notification_key_once() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  -- One notification per workspace and Idempotency-Key across every partition: the lock
  -- makes a second insert of the key wait for the first's commit, then see its row.
  PERFORM pg_advisory_xact_lock(1314013772,
                                hashtext(NEW.workspace_id::text || ':' || NEW.idempotency_key));
  IF EXISTS (SELECT 1 FROM notification WHERE workspace_id = NEW.workspace_id
             AND idempotency_key = NEW.idempotency_key AND id <> NEW.id) THEN
    RAISE EXCEPTION 'duplicate key value violates unique constraint "notification_idempotency"'
      USING ERRCODE = 'unique_violation', CONSTRAINT = 'notification_idempotency';
  END IF;
  RETURN NULL;
END $$;
"""

_TRIGGERS = """
CREATE TRIGGER notification_deleted AFTER DELETE ON notification
  FOR EACH ROW EXECUTE FUNCTION herald_notification_deleted();
CREATE TRIGGER notification_key_once AFTER INSERT ON notification
  FOR EACH ROW WHEN (NEW.idempotency_key IS NOT NULL)
  EXECUTE FUNCTION herald_notification_key_once();
"""


def month_start(at: dt.datetime | dt.date) -> dt.datetime:
    return dt.datetime(at.year, at.month, 1)


def add_months(month: dt.datetime, count: int) -> dt.datetime:
    index = month.year * 12 + month.month - 1 + count
    return dt.datetime(index // 12, index % 12 + 1, 1)


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def supported(db: Database) -> bool:
    return not isinstance(db, SqliteDatabase)


def is_partitioned(db: Database, table: str) -> bool:
    return db.execute_sql("SELECT 1 FROM pg_partitioned_table WHERE partrelid = "
                          "to_regclass(%s)", (_quote(table),)).fetchone() is not None


def partitions(db: Database, table: str) -> list[tuple[str, dt.datetime | None,
                                                      dt.datetime | None]]:
    """(name, from, to) of each partition, oldest first; None: unbounded (the first
    partition's start), and both None for the default partition."""
    rows = db.execute_sql(
        "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i "
        "JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass(%s)",
        (_quote(table),)).fetchall()
    found = []
    for name, bound in rows:
        if bound == "DEFAULT":
            found.append((name, None, None))
            continue
        lower, upper = bound.split(" TO ")
        dates = [_BOUND.search(part) for part in (lower, upper)]
        found.append((name, *(dt.datetime.fromisoformat(d.group(1)) if d else None
                              for d in dates)))
    return sorted(found, key=lambda p: (p[2] is None, p[2] or dt.datetime.max))


def _ddl(db: Database, statements: list[str], what: str) -> None:
    """Run ``statements`` in one transaction that waits at most LOCK_TIMEOUT for a lock,
    again while another transaction holds the table (a send never waits longer)."""
    for attempt in range(TRIES):
        try:
            with db.atomic():
                db.execute_sql(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
                for sql in statements:
                    db.execute_sql(sql)
            return
        except DatabaseError as error:
            if "lock timeout" not in str(error) or attempt == TRIES - 1:
                raise
            log.info("%s: the table is busy, trying again", what)
            time.sleep(min(0.2 * (attempt + 1), 2.0))


def create_functions(db: Database) -> None:
    db.execute_sql(_FUNCTIONS)


def convert(db: Database, now: dt.datetime | None = None) -> list[str]:
    """Partition every table of TABLES not partitioned yet; the tables converted."""
    if not supported(db):
        return []
    create_functions(db)
    done = []
    for table, key in TABLES.items():
        if not is_partitioned(db, table):
            _convert_table(db, table, key, now or utcnow())
            done.append(table)
        ensure_months(db, table, now)
    return done


def _checks(db: Database, table: str) -> dict[str, bool]:
    """The table's boundary constraints made by a conversion, and whether each is valid."""
    rows = db.execute_sql(
        "SELECT conname, convalidated FROM pg_constraint WHERE conrelid = to_regclass(%s) "
        "AND contype = 'c' AND conname LIKE %s", (_quote(table), f"{table}_before_%")).fetchall()
    return dict(rows)


def _convert_table(db: Database, table: str, key: str, now: dt.datetime) -> None:
    boundary = add_months(month_start(now), 2)
    check = f"{table}_before_{boundary:%Y_%m}"
    checks = _checks(db, table)
    for stale in set(checks) - {check}:  # from a conversion interrupted months ago
        _ddl(db, [f"ALTER TABLE {_quote(table)} DROP CONSTRAINT {_quote(stale)}"], table)
    if check not in checks:
        _ddl(db, [f"ALTER TABLE {_quote(table)} ADD CONSTRAINT {_quote(check)} CHECK "
                  f"({_quote(key)} < '{boundary:%Y-%m-%d}') NOT VALID"], table)
    if not checks.get(check):
        with db.atomic():  # a scan under a lock that lets reads and writes go on
            db.execute_sql(f"ALTER TABLE {_quote(table)} VALIDATE CONSTRAINT {_quote(check)}")
    _ddl(db, _swap(db, table, key, boundary), table)
    log.info("%s: partitioned by month; its rows so far are the partition %s_until_%s",
             table, table, f"{boundary:%Y_%m}")


def _swap(db: Database, table: str, key: str, boundary: dt.datetime) -> list[str]:
    """The statements of the swap: rename, make the partitioned table, attach."""
    first = f"{table}_until_{boundary:%Y_%m}"
    q, qfirst = _quote(table), _quote(first)
    locked = [table, *(c for c in CHILDREN if c != table)] if table == "notification" else [
        table]
    statements = [f"LOCK TABLE {', '.join(map(_quote, locked))} IN ACCESS EXCLUSIVE MODE",
                  f"ALTER TABLE {q} RENAME TO {qfirst}",
                  f"CREATE TABLE {q} (LIKE {qfirst} INCLUDING DEFAULTS INCLUDING STORAGE "
                  f"INCLUDING COMPRESSION) PARTITION BY RANGE ({_quote(key)})"]
    # Its own foreign keys, the same as the first partition's so the attach takes them
    # over instead of checking every row again.
    for name, definition in db.execute_sql(
            "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE "
            "conrelid = to_regclass(%s) AND contype = 'f'", (q,)).fetchall():
        statements.append(f"ALTER TABLE {q} ADD CONSTRAINT {_quote(name)} {definition}")
    # Foreign keys that reference it cannot reference a partitioned table's id.
    for child, name in db.execute_sql(
            "SELECT conrelid::regclass::text, conname FROM pg_constraint WHERE "
            "confrelid = to_regclass(%s) AND contype = 'f'", (q,)).fetchall():
        statements.append(f"ALTER TABLE {child} DROP CONSTRAINT {_quote(name)}")
    for (column,) in db.execute_sql(
            "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attnum > 0"
            " AND NOT attisdropped AND pg_get_serial_sequence(%s, attname) IS NOT NULL",
            (q, q)).fetchall():
        sequence = db.execute_sql("SELECT pg_get_serial_sequence(%s, %s)",
                                  (q, column)).fetchone()[0]
        statements.append(f"ALTER SEQUENCE {sequence} OWNED BY {q}.{_quote(column)}")
    statements.append(f"ALTER TABLE {q} ATTACH PARTITION {qfirst} FOR VALUES FROM "
                      f"(MINVALUE) TO ('{boundary:%Y-%m-%d}')")
    default = _quote(f"{table}_default")
    statements += [f"CREATE TABLE {default} (LIKE {qfirst} INCLUDING ALL EXCLUDING "
                   "CONSTRAINTS)", f"ALTER TABLE {q} ATTACH PARTITION {default} DEFAULT"]
    if table == "notification":
        statements += [sql.strip() for sql in _TRIGGERS.split(";") if sql.strip()]
    return statements


def ensure_ahead(db: Database, now: dt.datetime | None = None) -> list[str]:
    """``ensure_months`` for each partitioned table: the partitions made."""
    return [name for table in TABLES for name in ensure_months(db, table, now)]


def ensure_months(db: Database, table: str, now: dt.datetime | None = None,
                  ahead: int = AHEAD) -> list[str]:
    """Make the partitions of the current month and ``ahead`` more where missing (the
    worker's report job calls it); the names made. A month whose rows already went to the
    default partition (none was made in time) is left there, with a warning."""
    if not supported(db) or not is_partitioned(db, table):
        return []
    existing = partitions(db, table)
    ranged = [p for p in existing if p[2] is not None]
    if not ranged:
        return []
    template = _quote(ranged[-1][0])  # the newest: its indexes and storage
    first = month_start(now or utcnow())
    made = []
    for offset in range(ahead + 1):
        lo, hi = add_months(first, offset), add_months(first, offset + 1)
        if any((p_lo is None or p_lo < hi) and lo < p_hi for _, p_lo, p_hi in ranged):
            continue
        name = f"{table}_{lo:%Y_%m}"
        try:
            _ddl(db, [f"CREATE TABLE {_quote(name)} (LIKE {template} INCLUDING ALL "
                      "EXCLUDING CONSTRAINTS)",
                      f"ALTER TABLE {_quote(table)} ATTACH PARTITION {_quote(name)} FOR VALUES"
                      f" FROM ('{lo:%Y-%m-%d}') TO ('{hi:%Y-%m-%d}')"], name)
        except DatabaseError as error:
            log.warning("%s: partition %s not made (%s); its rows stay in %s_default",
                        table, name, str(error).strip(), table)
            continue
        made.append(name)
        ranged.append((name, lo, hi))
    return made
