"""What the dev inbox keeps (development and test only): the messages its provider
received and the requests its webhook catcher received (docs/operations.md)."""

from __future__ import annotations

from peewee import AutoField, BigIntegerField, BooleanField, CharField, DateTimeField, TextField

from engine.database.fields import JSONField
from engine.database.models import BaseModel, utcnow


class InboxMessage(BaseModel):
    """What the dev inbox provider received (development and test only)."""

    id = AutoField()
    workspace_id = CharField(max_length=40, null=True)
    notification_id = CharField(max_length=40, null=True)
    channel = CharField(max_length=10)
    sender = TextField(null=True)
    to = JSONField(default=list)
    cc = JSONField(default=list)
    bcc = JSONField(default=list)
    subject = TextField(null=True)
    text = TextField(null=True)
    html = TextField(null=True)
    raw = TextField(null=True)
    headers = JSONField(default=dict)
    size_bytes = BigIntegerField(default=0)
    created_at = DateTimeField(default=utcnow)


class CaughtWebhook(BaseModel):
    """A request the dev inbox's webhook catcher received (development and test only), with
    whether its signature verified with its workspace's secret when it arrived."""

    id = AutoField()
    name = CharField(max_length=64)
    headers = JSONField(default=dict)
    body = TextField()
    size_bytes = BigIntegerField(default=0)
    delivery_id = CharField(max_length=64, null=True)
    workspace_id = CharField(max_length=40, null=True)
    notification_id = CharField(max_length=40, null=True)
    verified = BooleanField(default=False)
    verdict = CharField(max_length=200)
    created_at = DateTimeField(default=utcnow)


INBOX_MODELS: tuple[type[BaseModel], ...] = (InboxMessage, CaughtWebhook)
