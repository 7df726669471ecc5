"""The audit log: who did what in a workspace, newest first, never a secret's value."""

from __future__ import annotations

from typing import Any

from engine.database.models import Workspace
from engine.database.models.people import AuditEvent, User

OPERATOR = "operator (herald CLI)"
# Detail keys that must never be written, whatever a caller passes: the log outlives secrets.
_FORBIDDEN = ("key", "secret", "password", "token", "url", "value")


def record(workspace: Workspace | Any, actor: User | None, action: str, subject: str = "",
           details: dict[str, Any] | None = None) -> AuditEvent:
    """Write one event; ``details`` holding a secret-looking key is a programming error."""
    details = details or {}
    leaked = [k for k in details if k.lower() in _FORBIDDEN]
    if leaked:
        raise ValueError(f"audit details must not hold {', '.join(leaked)}")
    return AuditEvent.create(workspace=workspace, actor=actor,
                             actor_label=actor.email if actor else OPERATOR,
                             action=action, subject=subject[:500], details=details)


def recent(workspace: Workspace, limit: int = 200, before: int | None = None,
           area: str | None = None, actor_label: str | None = None) -> list[AuditEvent]:
    """Newest first; ``area`` narrows to one kind of object (the action's part before the
    dot: ``api_key``, ``template``...), ``actor_label`` to one person (or the operator)."""
    query = AuditEvent.select().where(AuditEvent.workspace == workspace)
    if before is not None:
        query = query.where(AuditEvent.id < before)
    if area:
        query = query.where(AuditEvent.action.startswith(area + "."))
    if actor_label:
        query = query.where(AuditEvent.actor_label == actor_label)
    return list(query.order_by(AuditEvent.id.desc()).limit(limit))


def choices(workspace: Workspace) -> tuple[list[str], list[str]]:
    """The areas and the people the workspace's log holds: what its filters offer."""
    base = AuditEvent.select().where(AuditEvent.workspace == workspace)
    actions = {row.action for row in base.select(AuditEvent.action).distinct()}
    labels = sorted({row.actor_label for row in
                     base.select(AuditEvent.actor_label).distinct()})
    return sorted({action.split(".", 1)[0] for action in actions}), labels
