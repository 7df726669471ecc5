"""A whole month of notifications deleted as a partition drop instead of row by row
(PostgreSQL; engine/database/partitions.py): its attempts go with it, the attempt partitions
of the same months as whole tables too, and the rows of the tables that name a
notification in batches, as the trigger ``notification_deleted`` would have.

The partition is detached first (a moment's lock, retried as the conversion's steps are):
from then on no query sees its rows, as if deleted. A drop interrupted after that is
finished by the next one (the detached table keeps its name)."""

from __future__ import annotations

import datetime as dt
import logging

from peewee import Database

from engine.database.partitions import _ddl, _quote, partitions

log = logging.getLogger("herald.store")
BATCH = 5000  # notifications whose rows in the other tables go in one statement each
NAMED_BY = ("tracking_event", "notification_event", "notification_lookup", "delivery_attempt")
# An attempt starts after its notification was accepted, but on another host's clock: an
# attempt partition goes whole only if none of its last day's rows names a notification
# that is kept.
SKEW = dt.timedelta(days=1)


# Set on a partition as it is detached: a table of a similar name made by hand is never
# taken for one.
MARK = "herald: a month of notifications being dropped"


def detached(db: Database) -> list[str]:
    """Notification partitions a drop detached and did not finish."""
    rows = db.execute_sql(
        "SELECT c.relname FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace = "
        "current_schema()::regnamespace AND NOT c.relispartition AND "
        "obj_description(c.oid, 'pg_class') = %s", (MARK,)).fetchall()
    return sorted(name for (name,) in rows)


def drop_month(db: Database, name: str) -> int:
    """Drop the notification partition ``name`` and what names its rows; the notifications
    it held."""
    if name in {p[0] for p in partitions(db, "notification")}:
        _ddl(db, [f"ALTER TABLE notification DETACH PARTITION {_quote(name)}",
                  f"COMMENT ON TABLE {_quote(name)} IS '{MARK}'"], name)
    count = db.execute_sql(f"SELECT count(*) FROM {_quote(name)}").fetchone()[0]
    _drop_attempt_months(db)
    after = None
    while True:
        query = f"SELECT id FROM {_quote(name)}"
        params: tuple = ()
        if after is not None:
            query += " WHERE id > %s"
            params = (after,)
        ids = [row[0] for row in db.execute_sql(f"{query} ORDER BY id LIMIT {BATCH}",
                                                params).fetchall()]
        if not ids:
            break
        with db.atomic():
            for table in NAMED_BY:
                db.execute_sql(f"DELETE FROM {table} WHERE notification_id = ANY(%s::uuid[])",
                               ([str(i) for i in ids],))
        after = ids[-1]
    _ddl(db, [f"DROP TABLE {_quote(name)}"], name)
    log.info("dropped %s: %d notifications, a whole month past the retention", name, count)
    return count


def _drop_attempt_months(db: Database) -> list[str]:
    """Attempt partitions every row of which names a notification gone: those that end
    before the oldest notification partition kept starts."""
    kept = [p for p in partitions(db, "notification") if p[2] is not None]
    if not kept or kept[0][1] is None:
        return []
    oldest = kept[0][1]
    dropped = []
    for name, _, high in partitions(db, "delivery_attempt"):
        if high is None or high > oldest or db.execute_sql(
                "SELECT 1 FROM notification_default WHERE created_at < %s LIMIT 1",
                (high,)).fetchone():
            break  # a notification kept may have attempts in it
        named = db.execute_sql(
            f"SELECT 1 FROM {_quote(name)} a WHERE a.started_at >= %s AND EXISTS (SELECT 1 "
            "FROM notification n WHERE n.id = a.notification_id) LIMIT 1",
            (high - SKEW,)).fetchone()
        if named:
            break
        _ddl(db, [f"ALTER TABLE delivery_attempt DETACH PARTITION {_quote(name)}",
                  f"DROP TABLE {_quote(name)}"], name)
        dropped.append(name)
    return dropped
