"""What an Owner or Admin does by hand on the Callbacks page: a test event, a replay of a
failed callback, and the recent callbacks to look at. Both sends run at once, not through
the queue, so the page shows how the receiver answered; the web application runs them off
its request threads (web/settings/background_tests.py)."""

from __future__ import annotations

import uuid
from typing import Any

from engine.callbacks.payloads import TEST_TYPE, body
from engine.callbacks.sending import FAILED, PENDING, Sent, attempt
from engine.database.models import Workspace, utcnow
from engine.database.models.callbacks import Callback

RECENT = 50


def send_test(workspace: Workspace) -> tuple[Callback, Sent]:
    """A ``callback.test`` event, signed and retried like any callback."""
    callback = new_test(workspace)
    return callback, attempt(callback)


def new_test(workspace: Workspace) -> Callback:
    """The row of a ``callback.test`` event, pending, before its first attempt."""
    now = utcnow()
    return Callback.create(
        workspace=workspace.id, notification_id=None, delivery_id=str(uuid.uuid4()),
        event=TEST_TYPE, recipient=None, created_at=now, updated_at=now,
        body=body(TEST_TYPE, notification_id=None, correlation_id=None, template_id=None,
                  channel=None, recipient=None, occurred_at=now,
                  detail={"message": "A test event from the Callbacks page."}))


def failed(workspace: Workspace, callback_id: Any) -> Callback | None:
    """The workspace's failed callback of that id, or None (another workspace's, gone, or
    not failed)."""
    try:
        key = int(callback_id)
    except (TypeError, ValueError):
        return None
    return Callback.get_or_none(Callback.id == key, Callback.workspace == workspace.id,
                                Callback.status == FAILED)


def replay(workspace: Workspace, callback_id: Any) -> tuple[Callback, Sent] | None:
    """Send a failed callback of the workspace again now, with the same delivery id and
    body (a receiver that dedupes sees it once); its attempts count afresh. None when the
    workspace has no such failed callback."""
    callback = failed(workspace, callback_id)
    if callback is None:
        return None
    callback.status, callback.attempts, callback.next_attempt_at = PENDING, 0, None
    return callback, attempt(callback)


def recent(workspace: Workspace, limit: int = RECENT, *,
           failed_only: bool = False) -> list[Callback]:
    """The workspace's latest callbacks, newest first (only the failed ones if asked)."""
    query = Callback.select().where(Callback.workspace == workspace.id)
    if failed_only:
        query = query.where(Callback.status == FAILED)
    return list(query.order_by(Callback.id.desc()).limit(limit))
