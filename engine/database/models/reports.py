"""The reports' tables (docs/reports.md): what providers report after a notification left,
the lookup index for search, and the daily rollups with the report job's marks."""

from __future__ import annotations

import uuid

from peewee import (
    AutoField,
    BigAutoField,
    BooleanField,
    CharField,
    DateField,
    DateTimeField,
    ForeignKeyField,
    IntegerField,
    TextField,
    UUIDField,
)

from engine.database.models import BaseModel, Notification, Workspace, utcnow


class NotificationEvent(BaseModel):
    """What a provider or a mail server reported about a notification after it left
    (engine/reports/events.py is its one writer; docs/reports.md)."""

    id = BigAutoField()
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=False)
    notification = ForeignKeyField(Notification, backref="provider_events", on_delete="CASCADE")
    kind = CharField(max_length=16)  # delivered | bounced | soft_bounced | deferred | complained
    recipient = CharField(max_length=320, null=True)  # its suppression key
    source = CharField(max_length=16)  # postmark | twilio | dsn | arf
    detail = TextField(null=True)  # the provider's words, truncated
    dedupe_key = CharField(max_length=200, null=True)  # a webhook retried records once
    occurred_at = DateTimeField(default=utcnow)

    class Meta:
        indexes = ((("workspace", "dedupe_key"), True),
                   (("workspace", "recipient", "occurred_at"), False))


class NotificationLookup(BaseModel):
    """Recipients and correlation ids of notifications, filled off the send path by the
    report job so that the feed finds them by index (engine/reports/lookup.py)."""

    id = BigAutoField()
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=False)
    notification = ForeignKeyField(Notification, on_delete="CASCADE", index=False)
    kind = CharField(max_length=1)  # r: recipient (suppression key) | c: correlation id
    term = CharField(max_length=320)
    created_at = DateTimeField()

    class Meta:
        indexes = ((("workspace", "kind", "term", "created_at"), False),
                   (("notification", "kind", "term"), True))


class ReportDay(BaseModel):
    """A (workspace, UTC day) whose notifications created before ``rolled_until`` are
    counted in ReportRollup (engine/reports/rollups.py); a later event on one of them
    updates those counts in its own transaction (engine/reports/events.py)."""

    id = AutoField()
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=False)
    day = DateField()
    rolled_until = DateTimeField()
    pruned = BooleanField(default=False)  # its notifications are gone (retention)

    class Meta:
        indexes = ((("workspace", "day"), True),)


# ReportRollup.template_id of notifications without a template (unique keys need a value).
NO_TEMPLATE = uuid.UUID(int=0)


class ReportRollup(BaseModel):
    """Counts of one day's notifications of one template, channel and report status."""

    id = BigAutoField()
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=False)
    day = DateField()
    template_id = UUIDField(default=NO_TEMPLATE)  # no key: counts outlive a template
    channel = CharField(max_length=10)
    status = CharField(max_length=12)
    accepted = IntegerField(default=0)
    complained = IntegerField(default=0)
    opened = IntegerField(default=0)
    clicked = IntegerField(default=0)
    unsubscribed = IntegerField(default=0)

    class Meta:
        indexes = ((("workspace", "day", "template_id", "channel", "status"), True),)


class ReportCursor(BaseModel):
    """Where a report job left off (the lookup indexer's high-water mark)."""

    name = CharField(max_length=40, primary_key=True)
    at = DateTimeField()


REPORT_MODELS: tuple[type[BaseModel], ...] = (NotificationEvent, NotificationLookup, ReportDay,
                                               ReportRollup, ReportCursor)
