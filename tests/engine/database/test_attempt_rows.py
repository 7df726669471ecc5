"""Attempt rows as the delivery path writes them (a fan-out's checkpoint, its pause, an
outcome with many rows): read back, every value is what was recorded, whatever a provider's
answer held. On PostgreSQL the rows travel as one JSON parameter; on SQLite as values."""

from __future__ import annotations

import datetime as dt

import pytest

from engine.database import notification_store
from engine.database.attempt_rows import ATTEMPT_FIELDS
from engine.database.models import DeliveryAttempt, Notification
from engine.database.vocabulary import NotificationStatus, Outcome
from engine.delivery.attempts import attempt_row
from tests import factories

# What a provider may answer: quotes, backslashes, a NUL (PostgreSQL refuses it in text),
# characters past Latin-1, JSON's own syntax, SQL's.
AWKWARD = 'a "quoted" \\ back\x00slash, ünïcödé ☃ 𝄞, {"json": [1]}, \'; DROP TABLE x; --'


def _rows(notification: Notification, count: int) -> list[dict]:
    started = dt.datetime(2026, 12, 6, 15, 40, 1, 123456)
    rows = []
    for i in range(count):
        row = attempt_row(notification, Outcome.DELIVERED if i % 2 else Outcome.PERMANENT,
                          recipient=f"reader{i}@example.net", duration_ms=i,
                          status_code=None if i % 3 else 550 + i,
                          error=None if i % 2 else f"{AWKWARD} {i}",
                          response_excerpt=AWKWARD if i == 1 else None,
                          provider_message_id=f"<{i}@herald.test>" if i % 2 else None,
                          started_at=started + dt.timedelta(microseconds=i))
        row["provider"] = "smtp"
        if i == 2:  # a list of providers tried in turn
            row["delivered_via"] = "postmark"
            row["providers_tried"] = [{"provider": "smtp", "outcome": "transient",
                                       "error": AWKWARD}, {"provider": "postmark",
                                                           "outcome": "delivered"}]
        rows.append(row)
    return rows


def _stored(notification: Notification) -> list[dict]:
    fields = ATTEMPT_FIELDS
    return [{f.name: getattr(a, f.name if f.name != "notification" else "notification_id")
             for f in fields}
            for a in DeliveryAttempt.select().where(
                DeliveryAttempt.notification == notification.id)
            .order_by(DeliveryAttempt.started_at)]


def _expected(rows: list[dict]) -> list[dict]:
    def value(row: dict, name: str):
        found = row.get(name)
        return found.replace("\x00", "\ufffd") if isinstance(found, str) else found
    return [{f.name: value(row, f.name) for f in ATTEMPT_FIELDS}
            for row in rows]


@pytest.fixture
def sending(settings) -> Notification:
    ws = factories.workspace()
    notification = factories.notification(ws, factories.email_payload(emailType="Marketing"))
    Notification.update(status=NotificationStatus.SENDING, attempts=1) \
        .where(Notification.id == notification.id).execute()
    return Notification.get_by_id(notification.id)


def test_a_checkpoint_stores_every_value_and_renews_the_lease(sending):
    before = sending.updated_at
    rows = _rows(sending, 45)
    notification_store.record_attempts(rows, sending)
    assert _stored(sending) == _expected(rows)
    assert Notification.get_by_id(sending.id).updated_at > before


def test_an_outcome_with_many_rows_stores_every_value(sending):
    rows = _rows(sending, 9)
    notification_store.record_outcome(sending, rows, NotificationStatus.DELIVERED, None, None)
    assert _stored(sending) == _expected(rows)
    assert Notification.get_by_id(sending.id).status == NotificationStatus.DELIVERED


def test_a_pause_stores_every_value(sending):
    rows = _rows(sending, 7)
    assert notification_store.record_pause(sending, rows)
    assert _stored(sending) == _expected(rows)
    assert Notification.get_by_id(sending.id).status == NotificationStatus.QUEUED
