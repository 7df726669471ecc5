"""The hot statements on notification rows, written once as SQL.

A send inserts one row; a delivery job claims it, looks up suppressions and records the
outcome. Built by peewee each of these cost several times the database round trip in Python
(docs/performance.md, "Measurements behind the code's shape"), so they are written here as
SQL with the models' own column names and value conversions (``db_value`` /
``python_value``), cached per database. Every other statement stays with peewee.

Round trips: a send, one (the insert commits alone, no BEGIN/COMMIT pair); a delivery job,
two: the claim, which also reads the signing secret and the suppressed recipients, and the
outcome (one statement on PostgreSQL: a CTE inserts the attempts and updates the row). The
claim sets two attributes beside the model's fields: ``sealed_signing_secret`` and, when
the payload lists its ``suppressionKeys``, ``suppressed_keys`` (each suppressed key with its
scope).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from collections.abc import Iterable
from typing import Any

from peewee import Database, PostgresqlDatabase

from engine.database import attempt_rows, prepared, secrets
from engine.database.attempt_rows import ATTEMPT_FIELDS, no_nul
from engine.database.db import database
from engine.database.models import DeliveryAttempt, Notification, Suppression, Workspace, utcnow
from engine.database.vocabulary import NotificationStatus, merged_pairs, stops

NOTIFICATION_FIELDS = Notification._meta.sorted_fields
# Outcomes with up to this many attempt rows run as prepared statements (one per count).
_PREPARED_ATTEMPTS = 4


def _quoted(name: str) -> str:
    return f'"{name}"'


@functools.lru_cache(maxsize=4)
def _statements(db: Database) -> dict[str, str]:
    """The SQL of each statement for one database (its placeholder, its dialect)."""
    p = db.param
    table = _quoted(Notification._meta.table_name)
    columns = ", ".join(_quoted(f.column_name) for f in NOTIFICATION_FIELDS)
    # Never an attempt past the channel's maximum, whoever enqueued the job: such a row is
    # the reconciler's to end (engine/worker/reconciler.py).
    claim = (
        f'UPDATE {table} SET "status" = {p}, "updated_at" = {p}, "attempts" = "attempts" + 1 '
        f'WHERE "id" = {p} AND "attempts" < CASE WHEN "channel" = {p} '
        f'THEN CAST({p} AS INTEGER) ELSE CAST({p} AS INTEGER) END '
        f'AND (("status" = {p} AND ("next_attempt_at" IS NULL '
        f'OR "next_attempt_at" <= {p})) OR ("status" = {p} AND "updated_at" < {p}))')
    if db.returning_clause:
        # Two answers ride along in the same round trip: the workspace's signing secret (a
        # webhook attempt signs with the current one, D7 in docs/api.md), and which of the
        # recipients the payload lists under "suppressionKeys" are suppressed now, with
        # their scopes (a JSON array of pairs).
        postgres = isinstance(db, PostgresqlDatabase)
        keys = (f"SELECT json_array_elements_text({table}.\"payload\"::json -> "
                "'suppressionKeys')" if postgres else
                f"SELECT value FROM json_each({table}.\"payload\", '$.suppressionKeys')")
        # Each as [address, scope]: the notification's stream decides which scopes stop it.
        found = (("json_agg(json_build_array" if postgres else "json_group_array(json_array")
                 + '(s."address", s."scope"))')
        claim += (f' RETURNING {columns}, (SELECT "signing_secret" FROM '
                  f'{_quoted(Workspace._meta.table_name)} WHERE "id" = {table}."workspace_id"), '
                  f'(SELECT {found} FROM {_quoted(Suppression._meta.table_name)} s '
                  f'WHERE s."workspace_id" = {table}."workspace_id" AND s."address" IN ({keys})), '
                  # Whether an erasure kept a suppression as a keyed hash (engine/retention/
                  # erasure.py): only then are the recipients' hashes asked for too.
                  f'(SELECT "hashed_suppressions" FROM {_quoted(Workspace._meta.table_name)} '
                  f'WHERE "id" = {table}."workspace_id")')
    # The claim is a lease: if the database crashed before flushing it, the row is simply
    # claimable again, as it would be once stale. Only the outcome must wait for the disk
    # (its commit flushes the claim too), so the claim does not.
    lease = "SET LOCAL synchronous_commit TO OFF; " if isinstance(db, PostgresqlDatabase) else ""
    insert = (f"INSERT INTO {table} ({columns}) VALUES ("
              + ", ".join([p] * len(NOTIFICATION_FIELDS)) + ")")
    attempt_columns = ", ".join(_quoted(f.column_name) for f in ATTEMPT_FIELDS)
    attempt_table = _quoted(DeliveryAttempt._meta.table_name)
    return {
        "claim": claim,
        "lease": lease,
        "insert": insert,
        "read": f'SELECT {columns} FROM {table} WHERE "id" = {p}',
        # A fan-out that yields the worker: queued again, and the claim's count of this
        # attempt given back (its next part is the same attempt, engine/delivery/fair_share.py).
        "pause": (f'UPDATE {table} SET "status" = {p}, "updated_at" = {p}, '
                  f'"next_attempt_at" = NULL, "attempts" = "attempts" - 1 '
                  f'WHERE "id" = {p} AND "status" = {p}'),
        "renew": (f'UPDATE {table} SET "updated_at" = {p} WHERE "id" = {p} '
                  f'AND "status" = {p}'),
        "finish": (f'UPDATE {table} SET "status" = {p}, "last_error" = {p}, "updated_at" = {p}, '
                   f'"next_attempt_at" = {p} WHERE "id" = {p}'),
        "attempt_row": "(" + ", ".join([p] * len(ATTEMPT_FIELDS)) + ")",
        "attempts": f"INSERT INTO {attempt_table} ({attempt_columns}) VALUES ",
        # PostgreSQL: any number of attempt rows as one JSON parameter (attempt_rows.py).
        "attempts_json": (f"INSERT INTO {attempt_table} ({attempt_columns}) "
                          f"SELECT {attempt_columns} FROM "
                          f"json_populate_recordset(NULL::{attempt_table}, {p}::json)"),
        # On PostgreSQL one statement for any number of addresses (an array), so it is
        # prepared once; SQLite has no arrays: the caller appends the IN list.
        "suppressed": (f'SELECT "address", "scope" FROM {_quoted(Suppression._meta.table_name)} '
                       f'WHERE "workspace_id" = {p} AND "address" '
                       + (f"= ANY({p})" if isinstance(db, PostgresqlDatabase) else "IN ")),
        "secret": (f'SELECT "signing_secret" FROM {_quoted(Workspace._meta.table_name)} '
                   f'WHERE "id" = {p}'),
    }


def _notification(row: tuple) -> Notification:
    """The model from a row of NOTIFICATION_FIELDS, then what else the claim read."""
    count = len(NOTIFICATION_FIELDS)
    values = {f.name: f.python_value(v)
              for f, v in zip(NOTIFICATION_FIELDS, row[:count], strict=True)}
    # As peewee builds a row it read: no defaults computed (a UUID, two timestamps) only to
    # be overwritten by the row's own values.
    notification = Notification(__no_default__=True, **values)
    notification._dirty.clear()
    if len(row) > count:
        notification.sealed_signing_secret = row[count]
        if "suppressionKeys" in (notification.payload or {}):
            found = row[count + 1]
            if isinstance(found, str):  # SQLite answers JSON as text
                found = json.loads(found)
            pairs = list(found or [])
            if len(row) > count + 2 and row[count + 2]:
                pairs += _hashed_pairs(notification.workspace_id,
                                       notification.payload["suppressionKeys"] or [])
            notification.suppressed_keys = merged_pairs(pairs)
    return notification


def _hashed_pairs(workspace_id: Any, keys: Iterable[str]) -> list[tuple[str, str]]:
    """Of ``keys``, those whose keyed hash is on the workspace's list (an erased address's
    suppression is kept so, docs/operations.md "Erasure"), as [key, scope] pairs."""
    by_hash = {secrets.recipient_hash(str(k)): str(k) for k in keys}
    if not by_hash:
        return []
    rows = Suppression.select(Suppression.address, Suppression.scope).where(
        Suppression.workspace == workspace_id, Suppression.address.in_(list(by_hash))).tuples()
    return [(by_hash[address], scope) for address, scope in rows]


def insert(**values: Any) -> None:
    """Insert one accepted notification, committed when this returns (a 202 is durable).

    ``values`` are model field names; the others take their defaults.
    """
    insert_rows([row(**values)])


# Per column, in order: its field's name, its database conversion, and its default (a
# factory or a value), read off the model once rather than at every send.
_ROW_PLAN = [(f.name, f.db_value, f.default, callable(f.default)) for f in NOTIFICATION_FIELDS]


def row(**values: Any) -> tuple:
    """One notification's row as ``insert_rows`` takes it (``values`` as for ``insert``)."""
    return tuple([to_db(values[name] if name in values
                        else default() if factory else default)
                  for name, to_db, default, factory in _ROW_PLAN])


def insert_rows(rows: list[tuple]) -> None:
    """Insert rows made by ``row`` in one statement, committed together when this returns:
    all of them or none (engine/sending/group_commit.py)."""
    db = database.obj
    sql = _statements(db)["insert"]
    if len(rows) == 1:
        prepared.execute(db, "herald_insert", sql, rows[0])
        return
    head, _, one = sql.partition(" VALUES ")
    prepared.execute(db, f"herald_insert_{len(rows)}",
                     f"{head} VALUES {', '.join([one] * len(rows))}",
                     tuple(value for r in rows for value in r))


def claim(notification_id: str, stale_after: float, webhook_max_attempts: int,
          other_max_attempts: int, *, webhook_channel: str) -> Notification | None:
    """Atomically take the notification, so two jobs for one id never both send it.

    A row left in `sending` by a killed worker becomes claimable again once stale; a row
    whose attempts reached its channel's maximum never is (``webhook_channel``'s is
    ``webhook_max_attempts``, every other's ``other_max_attempts``). Returns the claimed
    row, read by the same statement where the database can.
    """
    db = database.obj
    sql = _statements(db)
    now = utcnow()
    key = Notification.id.db_value(notification_id)
    at = Notification.updated_at.db_value
    stale = at(now - dt.timedelta(seconds=stale_after))
    sending, queued = NotificationStatus.SENDING, NotificationStatus.QUEUED
    params = (sending, at(now), key, webhook_channel, webhook_max_attempts,
              other_max_attempts, queued, at(now), sending, stale)
    cursor = prepared.execute(db, "herald_claim", sql["claim"], params, prefix=sql["lease"])
    if db.returning_clause:
        row = cursor.fetchone()
        return _notification(row) if row else None
    if cursor.rowcount != 1:
        return None
    row = db.execute_sql(sql["read"], (key,)).fetchone()
    return _notification(row) if row else None


def suppressed(workspace_id: Any, addresses: Iterable[str], *, marketing: bool = True,
               topic: str | None = None) -> set[str]:
    """The lower-cased addresses (or numbers) of ``addresses`` suppressed in the workspace for
    a message of the Marketing stream (``marketing``, of ``topic``) or not (only ``all``
    rows stop it)."""
    return {address for address, scope in suppression_scopes(workspace_id, addresses).items()
            if stops(scope, marketing, topic)}


def suppression_scopes(workspace_id: Any, addresses: Iterable[str]) -> dict[str, str]:
    """Of ``addresses`` (lower-cased), those on the workspace's list, with each one's scope
    (its rows ``merged``: one address may be unsubscribed from several topics)."""
    wanted = sorted({a.lower() for a in addresses})
    if not wanted:
        return {}
    # An erased address's suppression is kept as its keyed hash: asked in the same statement.
    by_hash = {secrets.recipient_hash(a): a for a in wanted}
    wanted = sorted({*wanted, *by_hash})
    db = database.obj
    sql = _statements(db)["suppressed"]
    workspace = Suppression.workspace.db_value(workspace_id)
    if isinstance(db, PostgresqlDatabase):  # a preview's one database round trip
        cursor = prepared.execute(db, "herald_suppressed", sql, (workspace, wanted))
    else:
        sql += "(" + ", ".join([db.param] * len(wanted)) + ")"
        cursor = db.execute_sql(sql, (workspace, *wanted))
    return merged_pairs((by_hash.get(address, address), scope)
                        for address, scope in cursor.fetchall())


def signing_secret(notification: Notification) -> str | None:
    """The workspace's webhook signing secret as of the claim (a rotation applies at once)."""
    sealed = getattr(notification, "sealed_signing_secret", None)
    if sealed is None:
        db = database.obj
        row = db.execute_sql(_statements(db)["secret"],
                             (Workspace.id.db_value(notification.workspace_id),)).fetchone()
        sealed = row[0] if row else None
    return Workspace.signing_secret.python_value(sealed)


def _insert_attempts(sql: dict[str, str], attempts: list[dict[str, Any]]) -> tuple[str, tuple]:
    """One INSERT of the attempt rows, and its parameters."""
    rows = attempt_rows.as_values(attempts)
    return (sql["attempts"] + ", ".join([sql["attempt_row"]] * len(rows)),
            tuple(v for row in rows for v in row))


def _write_attempts(db: Database, sql: dict[str, str], attempts: list[dict[str, Any]]) -> None:
    """One INSERT of the attempt rows: on PostgreSQL their one JSON parameter, prepared."""
    if isinstance(db, PostgresqlDatabase):
        prepared.execute(db, "herald_attempts", sql["attempts_json"],
                         (attempt_rows.as_json(attempts),))
    else:
        db.execute_sql(*_insert_attempts(sql, attempts))


def record_attempts(attempts: list[dict[str, Any]],
                    notification: Notification | None = None) -> None:
    """Commit attempt rows of an attempt still running (a fan-out's checkpoint), in one
    statement: their recipients are settled even if this attempt never records its outcome.

    With ``notification``, the same commit renews the claim's lease (``updated_at``): a
    fan-out that runs longer than HERALD_RECONCILE_AFTER_SECONDS is under way, not stuck,
    and no other worker may claim it and send to its remaining recipients a second time.
    """
    if not attempts:
        return
    db = database.obj
    sql = _statements(db)
    if notification is None:
        _write_attempts(db, sql, attempts)
        return
    renew = (Notification.updated_at.db_value(utcnow()),
             Notification.id.db_value(notification.id), NotificationStatus.SENDING)
    if isinstance(db, PostgresqlDatabase):
        prepared.execute(db, "herald_checkpoint",
                         f"WITH attempt AS ({sql['attempts_json']}) {sql['renew']}",
                         (attempt_rows.as_json(attempts), *renew))
        return
    with db.atomic():
        _write_attempts(db, sql, attempts)
        db.execute_sql(sql["renew"], renew)


def record_outcome(notification: Notification, attempts: list[dict[str, Any]], status: str,
                   error: str | None, wait: float | None) -> None:
    """Insert the attempts and set the row's state in one commit (one statement on PostgreSQL).

    ``notification`` is updated in memory to match the row once it is committed (until then
    its status stays ``sending``: engine/delivery/jobs.py reads that as "no outcome recorded").
    """
    now = utcnow()
    next_attempt_at = now + dt.timedelta(seconds=wait) if wait else None
    db = database.obj
    sql = _statements(db)
    at = Notification.updated_at.db_value
    finish = (status, no_nul(error), at(now), at(next_attempt_at),
              Notification.id.db_value(notification.id))
    if isinstance(db, PostgresqlDatabase):
        if len(attempts) > _PREPARED_ATTEMPTS:  # a fan-out's outcome
            prepared.execute(db, "herald_outcome_json",
                             f"WITH attempt AS ({sql['attempts_json']}) {sql['finish']}",
                             (attempt_rows.as_json(attempts), *finish))
        elif attempts:
            rows = attempt_rows.as_values(attempts)
            values = ", ".join([sql["attempt_row"]] * len(rows))
            statement = f"WITH attempt AS ({sql['attempts']}{values}) {sql['finish']}"
            prepared.execute(db, f"herald_outcome_{len(rows)}", statement,
                             tuple(v for row in rows for v in row) + finish)
        else:
            prepared.execute(db, "herald_outcome_0", sql["finish"], finish)
    else:
        rows = attempt_rows.as_values(attempts)
        with db.atomic():
            if rows:
                db.cursor().executemany(sql["attempts"] + sql["attempt_row"], rows)
            db.execute_sql(sql["finish"], finish)
    notification.status = status
    notification.last_error = error
    notification.updated_at = now
    notification.next_attempt_at = next_attempt_at
    notification._dirty.clear()


def record_pause(notification: Notification, attempts: list[dict[str, Any]]) -> bool:
    """Commit the attempt rows of a fan-out's part and queue the row again, as the same
    attempt, in one transaction. False when the row was no longer this job's to pause."""
    now = utcnow()
    db = database.obj
    sql = _statements(db)
    with db.atomic():
        if attempts:
            _write_attempts(db, sql, attempts)
        cursor = db.execute_sql(sql["pause"], (
            NotificationStatus.QUEUED, Notification.updated_at.db_value(now),
            Notification.id.db_value(notification.id), NotificationStatus.SENDING))
        paused = cursor.rowcount == 1
    if paused:
        notification.status, notification.updated_at = NotificationStatus.QUEUED, now
        notification._dirty.clear()
    return paused
