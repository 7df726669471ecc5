"""The send itself: render, commit the notification row, enqueue its job, answer 202."""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

from engine.catalog import keycache
from engine.errors import ApiError
from engine.sending import limits
from engine.sending.admission import admit
from engine.sending.payload import payload, render_failed, render_parts
from engine.store import notification_store
from engine.store.queueing import enqueue_notification


def send(body: object, header: str | None, ip: str, correlation_id: str,
         parse_error: ApiError | None = None) -> dict[str, Any]:
    """202 SendResponse, or ApiError in the precedence of D1 (docs/api.md)."""
    resolved, key = admit(body, header, ip, parse_error, preview=False)
    account_id = str(resolved.account.id)
    try:
        rendered, errors = render_parts(resolved)
        if errors:
            raise render_failed(errors)
        notification_id = uuid.uuid4()
        notification_store.insert(
            id=notification_id, account=resolved.account.id, workspace=resolved.workspace.id,
            template=resolved.template.id, version_number=resolved.version.number,
            channel=resolved.template.channel, correlation_id=correlation_id,
            delivery_id=str(uuid.uuid4()), payload=payload(resolved, rendered))
    except BaseException:
        limits.refund(account_id)  # not accepted: give the allowance unit back
        raise
    # Committed: from here the send is accepted; if Redis is down the reconciler enqueues it.
    with contextlib.suppress(Exception):
        enqueue_notification(str(notification_id))
    keycache.touch(key)
    return {"accepted": True, "correlationId": correlation_id,
            "message": "Notification accepted and queued for delivery."}
