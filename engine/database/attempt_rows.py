"""Attempt rows as engine/database/notification_store.py's statements write them: as
values (SQLite; an outcome of a few rows, prepared per count) or as one JSON parameter
(PostgreSQL: a fan-out's checkpoint, its pause, its outcome).

As values, a checkpoint's 40 rows were 520 parameters, which psycopg2 adapts one by one
(about 11 µs a row; the JSON about 2) and which PostgreSQL parsed and planned anew at
every checkpoint; as one parameter of ``json_populate_recordset`` the statement is
prepared once (docs/performance.md, "The fan-out in instructions").
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from typing import Any

from peewee import CharField, DateTimeField, Field, ForeignKeyField, IntegerField, TextField

from engine.database.models import DeliveryAttempt
from engine.formats import json_text, uuid_text

ATTEMPT_FIELDS = [f for f in DeliveryAttempt._meta.sorted_fields if f.name != "id"]


def no_nul(value: Any) -> Any:
    """Text with any NUL replaced: PostgreSQL refuses it in text (psycopg2 raises ValueError),
    and an outcome must be recorded whatever a provider's or receiver's answer held."""
    return value.replace("\x00", "\ufffd") if type(value) is str and "\x00" in value else value


def _value(values: dict[str, Any], field: Any) -> Any:
    """The value of ``field`` in ``values``, else the field's default."""
    if field.name in values:
        return values[field.name]
    return field.default() if callable(field.default) else field.default


def as_values(attempts: list[dict[str, Any]]) -> list[tuple]:
    """Each row as the tuple of its ATTEMPT_FIELDS' database values."""
    return [tuple(no_nul(f.db_value(_value(attempt, f))) for f in ATTEMPT_FIELDS)
            for attempt in attempts]


def _iso(value: dt.datetime | None) -> str | None:
    return None if value is None else value.isoformat()  # naive UTC, as the column holds it


def _json_conversion(field: Field) -> Callable[[Any], Any] | None:
    """How a value of ``field`` is written in the rows' JSON: as the text or the number
    PostgreSQL reads into its column (None: as it is)."""
    if isinstance(field, DateTimeField):
        return _iso
    if isinstance(field, ForeignKeyField):  # a row's id (a UUID), else as the field writes it
        return lambda value: (uuid_text.of(value) if value.__class__ is uuid.UUID
                              else str(field.db_value(value)))
    if isinstance(field, IntegerField):
        return None
    if type(field) in (CharField, TextField):
        return no_nul
    return lambda value: no_nul(field.db_value(value))  # the column's own text (JSON)


# Per column: its name, the row's key, the conversion and the default.
_JSON_PLAN = [(f.column_name, f.name, _json_conversion(f), f.default, callable(f.default))
              for f in ATTEMPT_FIELDS]


def as_json(attempts: list[dict[str, Any]]) -> str:
    """The rows as one JSON array of objects keyed by column (a null left out), for
    PostgreSQL's ``json_populate_recordset``."""
    rows = []
    for attempt in attempts:
        row = {}
        for column, name, convert, default, factory in _JSON_PLAN:
            value = attempt[name] if name in attempt else default() if factory else default
            if value is not None:
                row[column] = value if convert is None else convert(value)
        rows.append(row)
    return json_text.compact(rows)
