from __future__ import annotations

import datetime as dt
import uuid

import pytest

from engine.database.models import DeliveryAttempt, Notification, TrackingEvent, utcnow
from tests import factories


class Run:
    """Notifications as a mixed run leaves them: rows, attempts and events."""

    def __init__(self, ws, templates):
        self.ws = ws
        self.templates = templates

    def sent(self, status="delivered", *, days_ago=0, template=0, channel="email",
             to=("ada@example.net",), is_test=False, refused=False, minutes=0):
        created = utcnow() - dt.timedelta(days=days_ago, minutes=minutes)
        payload = (factories.email_payload(to=list(to)) if channel == "email" else
                   {"channel": "sms", "to": list(to), "text": "x",
                    "suppressionKeys": sorted(to)})
        n = factories.notification(self.ws, payload, channel=channel, status=status,
                                   is_test=is_test, created_at=created, updated_at=created)
        n.template = self.templates[template].id
        n.save()
        if status != "queued":
            outcome = {"delivered": "delivered", "failed": "permanent"}.get(status, "suppressed")
            if status != "suppressed" or refused:
                DeliveryAttempt.create(notification=n, number=1, outcome=outcome,
                                       started_at=created, provider="smtp",
                                       provider_message_id=f"<{uuid.uuid4().hex}@example.com>",
                                       status_code=550 if refused else None,
                                       error="550 5.1.1 no such user" if refused else None)
        return n

    def track(self, n, kind, url=None):
        TrackingEvent.create(notification=n, kind=kind, recipient=None, url=url)


@pytest.fixture
def run(settings):
    ws = factories.workspace()
    templates = [factories.template(ws), factories.template(ws), factories.template(ws, "sms")]
    return Run(ws, templates)


def get(n: Notification) -> Notification:
    return Notification.get_by_id(n.id)


@pytest.fixture
def db_text(settings):
    """Every value of every table, as text (tests/support/database_text.py)."""
    from engine.database.db import database
    from tests.support.database_text import every_value

    return lambda: every_value(database.obj)
