"""Partials' tables (docs/rendering.md, "Partials"): a workspace's shared pieces of template
text (`{{> footer}}`, layouts used as `{{#> layout}}`), each with versions as a template
has: one draft, one live, previous ones."""

from __future__ import annotations

import uuid

from peewee import (
    SQL,
    CharField,
    DateTimeField,
    ForeignKeyField,
    IntegerField,
    TextField,
    UUIDField,
)

from engine.database.models import BaseModel, Workspace, utcnow
from engine.database.vocabulary import VersionStatus


class Partial(BaseModel):
    """A named partial of one workspace; ``name`` is what templates call it by."""

    id = UUIDField(primary_key=True, default=uuid.uuid4)
    workspace = ForeignKeyField(Workspace, backref="+", on_delete="CASCADE", index=False)
    name = CharField(max_length=100)
    created_at = DateTimeField(default=utcnow)

    class Meta:
        indexes = ((("workspace", "name"), True),)


class PartialVersion(BaseModel):
    """One version of a partial's body; ``compiled`` is its stored program (at publish)."""

    id = UUIDField(primary_key=True, default=uuid.uuid4)
    partial = ForeignKeyField(Partial, backref="versions", on_delete="CASCADE", index=False)
    number = IntegerField()
    status = CharField(max_length=10, default=VersionStatus.DRAFT)
    body = TextField(default="")
    compiled = TextField(null=True)
    created_at = DateTimeField(default=utcnow)
    published_at = DateTimeField(null=True)
    revision = IntegerField(default=0, constraints=[SQL("DEFAULT 0")])
    edited_at = DateTimeField(null=True)
    edited_by = CharField(max_length=320, null=True)
    published_by = CharField(max_length=320, null=True)

    class Meta:
        indexes = ((("partial", "number"), True),)


PARTIAL_MODELS: tuple[type[BaseModel], ...] = (Partial, PartialVersion)
