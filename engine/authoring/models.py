"""The editor's own table (created by migration step 6)."""

from __future__ import annotations

from peewee import DateTimeField, ForeignKeyField

from engine.fields import JSONField
from engine.models import BaseModel, Template, utcnow


class TemplateSample(BaseModel):
    """The sample tag values last previewed with a template, for the next person to edit it.
    Kept apart from the versions: samples are not template content and are never exported."""

    template = ForeignKeyField(Template, primary_key=True, backref="+", on_delete="CASCADE")
    tags = JSONField(default=dict)
    updated_at = DateTimeField(default=utcnow)


AUTHORING_MODELS = (TemplateSample,)
