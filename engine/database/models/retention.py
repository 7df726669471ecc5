"""Where each workspace's purge has reached (docs/operations.md, "Data retention"), and
the notifications it passed while they were still to deliver, purged once they finish."""

from __future__ import annotations

from peewee import DateTimeField, ForeignKeyField, UUIDField

from engine.database.models import BaseModel, Workspace, utcnow


class PurgeMark(BaseModel):
    """Every notification of the workspace created before ``purged_before`` is purged, but
    those waiting in PurgeWaiting: each run goes on from here, never over purged rows."""

    workspace = ForeignKeyField(Workspace, primary_key=True, on_delete="CASCADE")
    purged_before = DateTimeField()


class PurgeWaiting(BaseModel):
    """A notification due to be purged while it was queued, scheduled, sending or retrying
    (a purge never touches one): purged by the first run that finds it finished."""

    notification_id = UUIDField(primary_key=True)
    workspace = ForeignKeyField(Workspace, on_delete="CASCADE")
    created_at = DateTimeField(default=utcnow)


RETENTION_MODELS = (PurgeMark, PurgeWaiting)
