"""The secrets that authenticate provider events: one per workspace and provider whose
receiver names the workspace in its URL (docs/reports.md, "Provider events")."""

from __future__ import annotations

from peewee import AutoField, CharField, DateTimeField, ForeignKeyField

from engine.database.fields import EncryptedField
from engine.database.models import BaseModel, Workspace, utcnow


class InboundSecret(BaseModel):
    """The secret a provider's calls for one workspace carry (in the URL Herald prints),
    encrypted at rest; replaced in place by a rotation, so the previous one opens nothing."""

    id = AutoField()
    # Found through the unique (workspace, provider) index, which also serves the cascade.
    workspace = ForeignKeyField(Workspace, backref="inbound_secrets", on_delete="CASCADE",
                                index=False)
    provider = CharField(max_length=40)  # the name its receiver is registered under
    secret = EncryptedField()
    created_at = DateTimeField(default=utcnow)
    rotated_at = DateTimeField(null=True)  # null: never rotated since it was made

    class Meta:
        indexes = ((("workspace", "provider"), True),)


INBOUND_MODELS = (InboundSecret,)
