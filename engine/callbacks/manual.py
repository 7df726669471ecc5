"""What an Owner or Admin does by hand on the Callbacks page: a test event, a replay of a
failed callback, and the recent callbacks to look at. Both sends run at once, inside the
request (at most the webhook timeout), so the page shows how the receiver answered."""

from __future__ import annotations

import uuid
from typing import Any

from engine.callbacks.payloads import TEST_TYPE, body
from engine.callbacks.sending import FAILED, PENDING, Sent, attempt
from engine.store.callback_models import Callback
from engine.store.models import Workspace, utcnow

RECENT = 50


def send_test(workspace: Workspace) -> tuple[Callback, Sent]:
    """A ``callback.test`` event, signed and retried like any callback."""
    now = utcnow()
    callback = Callback.create(
        workspace=workspace.id, notification_id=None, delivery_id=str(uuid.uuid4()),
        event=TEST_TYPE, recipient=None, created_at=now, updated_at=now,
        body=body(TEST_TYPE, notification_id=None, correlation_id=None, template_id=None,
                  channel=None, recipient=None, occurred_at=now,
                  detail={"message": "A test event from the Callbacks page."}))
    return callback, attempt(callback)


def replay(workspace: Workspace, callback_id: Any) -> tuple[Callback, Sent] | None:
    """Send a failed callback of the workspace again now, with the same delivery id and
    body (a receiver that dedupes sees it once); its attempts count afresh. None when the
    workspace has no such failed callback."""
    try:
        key = int(callback_id)
    except (TypeError, ValueError):
        return None
    callback = Callback.get_or_none(Callback.id == key, Callback.workspace == workspace.id,
                                    Callback.status == FAILED)
    if callback is None:
        return None
    callback.status, callback.attempts, callback.next_attempt_at = PENDING, 0, None
    return callback, attempt(callback)


def recent(workspace: Workspace, limit: int = RECENT) -> list[Callback]:
    """The workspace's latest callbacks, newest first."""
    return list(Callback.select().where(Callback.workspace == workspace.id)
                .order_by(Callback.id.desc()).limit(limit))
