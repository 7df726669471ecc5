"""A recipient's own choices about the Marketing email a workspace sends them, from the
signed link each Marketing message carries (docs/delivery.md, "Topics"): which topics they
keep, or none. The link's page (web/preferences.py) and the RFC 8058 one-click POST
(api/tracking.py) both land here.

The link is signed with the recipient, the workspace, the message's topic and when it was
made; it is honoured for the workspace's retention period (30 days unless set), so it lasts
as long as the message's record. A GET never changes anything (link scanners open it); a
recipient's choice only ever writes or lifts their own ``unsubscribe`` rows, never a
bounce, a complaint or an operator's entry.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from engine.callbacks import recording as callbacks
from engine.catalog import suppressions, topics
from engine.database.models import Notification, TrackingEvent, Workspace
from engine.database.secrets import recipient_hash
from engine.database.vocabulary import TOPIC_PREFIX, SuppressionScope, purged_at, topic_scope
from engine.delivery.tracking import read_token
from engine.reports import events as report_events

DEFAULT_RETENTION_DAYS = 30
REASON = "unsubscribe"


@dataclass(frozen=True)
class Link:
    """What a valid link says: whose preferences, in which workspace, from which message."""

    workspace: Workspace
    recipient: str
    topic: str | None
    notification_id: str | None


@dataclass(frozen=True)
class Choice:
    """A topic on the page: its name, description, and whether the recipient receives it."""

    name: str
    description: str
    receiving: bool


def retention_days(workspace: Workspace) -> int:
    """The workspace's retention period in days (``retentionDays``), 30 when it has none."""
    return int(getattr(workspace, "retention_days", None) or DEFAULT_RETENTION_DAYS)


def read_link(token: str) -> Link | None:
    """The link's content, or None: forged, for another purpose, expired, or of a workspace
    or message that is gone."""
    data = read_token("unsubscribe", token)
    if not data or not isinstance(data.get("r"), str):
        return None
    notification_id = data.get("n") if isinstance(data.get("n"), str) else None
    if isinstance(data.get("w"), str):
        workspace = _workspace(data["w"])
        issued = data.get("i")
        if workspace is None or not isinstance(issued, int) or \
                time.time() > issued + retention_days(workspace) * 86400:
            return None
    else:  # a link made before links named their workspace: its message must still exist
        notification = _notification(notification_id)
        workspace = _workspace(str(notification.workspace_id)) if notification else None
        if workspace is None:
            return None
    topic = data.get("t") if isinstance(data.get("t"), str) else None
    return Link(workspace, data["r"], topic, notification_id)


def _workspace(value: str) -> Workspace | None:
    try:
        return Workspace.get_or_none(Workspace.id == uuid.UUID(value))
    except ValueError:
        return None


def _notification(value: str | None) -> Notification | None:
    try:
        return Notification.get_or_none(Notification.id == uuid.UUID(value)) if value else None
    except ValueError:
        return None


def choices(link: Link) -> tuple[list[Choice], bool]:
    """The workspace's topics as the recipient's page shows them, and whether they are
    unsubscribed from all Marketing email."""
    scopes = suppressions.scopes_of(link.workspace.id, link.recipient)
    everything = SuppressionScope.ALL in scopes or SuppressionScope.MARKETING in scopes
    return [Choice(t.name, t.description, not everything and topic_scope(t.name) not in scopes)
            for t in topics.every(link.workspace.id)], everything


def save(link: Link, keep: set[str]) -> list[str]:
    """The recipient keeps the topics in ``keep`` and leaves the workspace's others; the
    topics they left by this save."""
    workspace_id = link.workspace.id
    names = topics.names(workspace_id)
    scopes = suppressions.scopes_of(workspace_id, link.recipient)
    if any(name in keep for name in names):
        # Choosing a topic again takes back their own "unsubscribe from all".
        suppressions.lift(workspace_id, link.recipient, [SuppressionScope.MARKETING], [REASON])
    kept = [topic_scope(n) for n in names if n in keep]
    if kept:
        suppressions.lift(workspace_id, link.recipient, kept, [REASON])
    left = [n for n in names if n not in keep and topic_scope(n) not in scopes]
    for name in [n for n in names if n not in keep]:
        suppressions.add(workspace_id, [link.recipient], REASON, topic_scope(name))
    if link.topic in left:
        _record(link)
    return left


def unsubscribe_all(link: Link) -> None:
    """No more Marketing email of the workspace to the recipient (Transactional still
    arrives)."""
    suppressions.add(link.workspace.id, [link.recipient], REASON, SuppressionScope.MARKETING)
    _record(link)


def one_click(link: Link) -> str:
    """RFC 8058's one-click POST: the message's topic left, or all Marketing email for a
    message of no topic; the scope written."""
    scope = topic_scope(link.topic) if link.topic else SuppressionScope.MARKETING
    suppressions.add(link.workspace.id, [link.recipient], REASON, scope)
    _record(link)
    return str(scope)


def _record(link: Link) -> None:
    """The unsubscribe on the message's record (reports, the callback), while it exists."""
    notification = _notification(link.notification_id)
    if notification is None or notification.workspace_id != link.workspace.id:
        return
    purged = bool(purged_at(notification.payload))
    with report_events.changing(notification):  # its day's rollup follows (reports)
        # Past its retention (or erased): counted, naming no one (docs/operations.md).
        TrackingEvent.create(notification=notification, kind="unsubscribe",
                             recipient=recipient_hash(link.recipient) if purged
                             else link.recipient)
    if not purged:
        callbacks.tracked(notification, "unsubscribe", link.recipient)  # committed


def describe(scope: str) -> str:
    """What a written scope stops, in the recipient's words."""
    if scope.startswith(TOPIC_PREFIX):
        return f"marketing email about {scope.removeprefix(TOPIC_PREFIX)}"
    return "marketing email"
