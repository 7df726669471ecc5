"""The lists' table (docs/web.md, "Send to a list"): each uploaded list, its checked rows
and how its send went."""

from __future__ import annotations

import uuid

from peewee import CharField, DateTimeField, ForeignKeyField, IntegerField, TextField, UUIDField

from engine.database.fields import JSONField
from engine.database.models import BaseModel, Template, Workspace, utcnow


class RecipientList(BaseModel):
    """An uploaded list of recipients for one template (docs/web.md, "Send to a list"): the
    rows that passed the check, kept here (never in a form) until it is sent as one job.

    Each row becomes a notification whose correlation id is ``list-<id hex>-<row>``, so
    reports find a list's notifications by a range of that index, with no column on the
    notification row (engine/lists/)."""

    id = UUIDField(primary_key=True, default=uuid.uuid4)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE")
    template = ForeignKeyField(Template, on_delete="CASCADE")
    version_number = IntegerField()
    channel = CharField(max_length=10)
    filename = CharField(max_length=255)
    # [recipient column, tag names...] and [[row number, recipient, [tag values]], ...]
    columns = JSONField(default=list)
    rows = JSONField(default=list)
    row_count = IntegerField()
    # checking, refused, checked, scheduled, sending, sent, cancelled, failed
    status = CharField(max_length=12, default="checked")
    accepted = IntegerField(default=0)  # rows accepted so far (the job's progress)
    refused = JSONField(default=list)  # [[row number, why], ...]: rows the send refused
    uploaded_by = CharField(max_length=40, null=True)  # a user id, as text
    sent_by = CharField(max_length=40, null=True)
    created_at = DateTimeField(default=utcnow)
    sent_at = DateTimeField(null=True)
    finished_at = DateTimeField(null=True)
    cancelled = IntegerField(default=0)  # accepted rows a cancel stopped before a provider
    scheduled_for = DateTimeField(null=True)  # UTC; the list starts then (a schedule)
    time_zone = CharField(max_length=64, null=True)  # the zone the schedule was given in
    problem = TextField(null=True)  # why a check or a scheduled start failed
    problems = JSONField(null=True)  # a refused file's [[row or null, message], ...], bad rows
    late_rows = IntegerField(default=0)  # rows whose local time had passed at the start
    resume_at = DateTimeField(null=True)  # UTC; the next row's local time (time zone column)


LIST_MODELS: tuple[type[BaseModel], ...] = (RecipientList,)
