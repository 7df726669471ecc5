"""Delivery callbacks' table (docs/callbacks.md): each outcome to push to a workspace's
callback URL, its frozen body and delivery id, and how its latest attempt went."""

from __future__ import annotations

from peewee import (
    BigAutoField,
    CharField,
    DateTimeField,
    ForeignKeyField,
    IntegerField,
    TextField,
    UUIDField,
)

from engine.database.models import BaseModel, Workspace, utcnow


class Callback(BaseModel):
    """One outcome called back. ``id`` is the order it was recorded in (a workspace's
    callbacks leave in that order, docs/callbacks.md); the body is written once, so every
    retry sends the same bytes under the same delivery id."""

    id = BigAutoField()
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE", index=False)
    notification_id = UUIDField(null=True)  # null for a test event
    delivery_id = CharField(max_length=64, unique=True)  # X-Service-Delivery-Id
    event = CharField(max_length=40)  # the body's "type": notification.delivered...
    recipient = CharField(max_length=320, null=True)
    body = TextField()
    # pending (no attempt yet), retrying (next_attempt_at set), delivered, failed
    status = CharField(max_length=10, default="pending")
    attempts = IntegerField(default=0)
    status_code = IntegerField(null=True)  # the receiver's last answer, if it answered
    error = TextField(null=True)
    next_attempt_at = DateTimeField(null=True)
    created_at = DateTimeField(default=utcnow)
    updated_at = DateTimeField(default=utcnow)

    class Meta:
        indexes = ((("workspace", "status", "id"), False),  # a workspace's due callbacks
                   (("workspace", "id"), False),  # the Callbacks page, newest first
                   (("status", "next_attempt_at"), False))  # the sweep for lost jobs


CALLBACK_MODELS: tuple[type[BaseModel], ...] = (Callback,)
