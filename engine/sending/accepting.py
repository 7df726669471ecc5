"""The send itself: render, commit the notification row, enqueue its job, answer 202."""

from __future__ import annotations

import contextlib
import logging
import uuid
from typing import Any

from engine.catalog import keycache
from engine.errors import ApiError
from engine.plugins.manager import default_registry
from engine.sending import limits
from engine.sending.admission import admit
from engine.sending.payload import payload, render_parts, rendering_failed
from engine.store import notification_store
from engine.store.queueing import enqueue_notification
from engine.store.vocabulary import NotificationStatus

log = logging.getLogger("herald.api")


def send(body: object, header: str | None, ip: str, correlation_id: str,
         parse_error: ApiError | None = None) -> dict[str, Any]:
    """202 SendResponse, or ApiError in the precedence of D1 (docs/api.md)."""
    resolved, key = admit(body, header, ip, parse_error, preview=False)
    account_id = str(resolved.account.id)
    try:
        rendered, errors = render_parts(resolved)
        if errors:
            raise rendering_failed(errors)
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
    _accepted(str(notification_id), resolved.channel.name, str(resolved.workspace.id))
    return {"accepted": True, "correlationId": correlation_id,
            "message": "Notification accepted and queued for delivery."}


def _accepted(notification_id: str, channel: str, workspace_id: str) -> None:
    """The ``notification_accepted`` event, in the API process, once the row is committed
    and its job enqueued (or left to the reconciler)."""
    hook = default_registry().manager.hook.notification_accepted
    if not hook.get_hookimpls():  # nobody listens: nothing to build or call
        return
    try:
        hook(notification={"id": notification_id, "channel": channel,
                           "workspaceId": workspace_id,
                           "status": NotificationStatus.QUEUED})
    except Exception:  # the send is accepted: a listener's bug must not answer 500
        log.exception("a notification_accepted listener raised for %s", notification_id)
