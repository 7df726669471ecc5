"""What recipients choose and say: a workspace's topics (a Marketing email names one, and
an address may leave it on the preferences page) and the SMS messages people send back
(docs/delivery.md, "Topics" and "SMS keywords")."""

from __future__ import annotations

import uuid

from peewee import CharField, DateTimeField, ForeignKeyField, TextField, UUIDField

from engine.database.models import BaseModel, Workspace, utcnow


class Topic(BaseModel):
    """One kind of Marketing email a workspace sends (``news``, ``product``)."""

    id = UUIDField(primary_key=True, default=uuid.uuid4)
    workspace = ForeignKeyField(Workspace, backref="topics", on_delete="CASCADE")
    name = CharField(max_length=60)  # [A-Za-z0-9_-]: the suppression scope topic:NAME
    description = TextField(default="")
    created_at = DateTimeField(default=utcnow)

    class Meta:
        indexes = ((("workspace", "name"), True),)


class InboundMessage(BaseModel):
    """An SMS someone sent to one of the workspace's numbers, as its provider reported it.
    ``workspace`` is the one that last sent to ``sender`` from ``recipient`` (null when
    none did: kept for the operator, shown to no workspace)."""

    id = UUIDField(primary_key=True, default=uuid.uuid4)
    workspace = ForeignKeyField(Workspace, null=True, on_delete="CASCADE", index=False)
    provider = CharField(max_length=40)
    # The provider's id of the message: one delivered twice is recorded once.
    message_id = CharField(max_length=200, unique=True)
    sender = CharField(max_length=40)     # the person's number ("from")
    recipient = CharField(max_length=40)  # the number they wrote to ("to")
    text = TextField()
    # stop, start, help, or null: what the message's keyword did (docs/delivery.md)
    keyword = CharField(max_length=10, null=True)
    received_at = DateTimeField(default=utcnow)

    class Meta:
        indexes = ((("workspace", "received_at"), False),)


RECIPIENT_MODELS: tuple[type[BaseModel], ...] = (Topic, InboundMessage)
