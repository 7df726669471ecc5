"""The send itself: render, commit the notification row, enqueue its job, answer 202."""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from engine.catalog import keycache
from engine.errors import ApiError
from engine.observability import metrics
from engine.observability.outages import dependency_of, incidents
from engine.plugins.manager import default_registry
from engine.sending import idempotency, limits
from engine.sending.admission import admit
from engine.sending.idempotency import ACCEPTED_MESSAGE, IdempotencyKey, Replayed
from engine.sending.payload import payload, render_parts, rendering_failed
from engine.sending.resolution import Resolved
from engine.store import notification_store
from engine.store.queueing import enqueue_notification, is_bulk
from engine.store.vocabulary import NotificationStatus

log = logging.getLogger("herald.api")

__all__ = ["Replayed", "accept", "send"]


def send(body: object, header: str | None, ip: str, correlation_id: str,
         parse_error: ApiError | None = None,
         idempotency_key: str | None = None) -> dict[str, Any]:
    """202 SendResponse, or ApiError in the precedence of D1 (docs/api.md).

    With an ``idempotency_key`` (the header's value) a request the key has already seen
    raises Replayed, whose ``answer`` is the first request's.
    """
    idem = idempotency.read_header(idempotency_key, body, parse_error)
    resolved, key = admit(body, header, ip, parse_error, preview=False, idem=idem,
                          correlation_id=correlation_id)
    account_id = str(resolved.account.id)
    workspace_id = key.workspace_id
    keyed = idem if idem is not None and idem.usable else None
    try:
        accept(resolved, correlation_id, keyed, workspace_id)
    except BaseException:
        # Not accepted: give the allowance unit back (and the key's pending record).
        if keyed is not None:
            idempotency.release(keyed, workspace_id, correlation_id, account_id)
        else:
            limits.refund(account_id)
        raise
    keycache.touch(key)
    return {"accepted": True, "correlationId": correlation_id, "message": ACCEPTED_MESSAGE}


def accept(resolved: Resolved, correlation_id: str, keyed: IdempotencyKey | None,
           workspace_id: str, *, bulk: bool = False) -> uuid.UUID:
    """Render, commit the notification row and enqueue its job: the one accept path of an
    admitted send (the API's, and each row of a list, engine/lists/). Raises what the
    commit raises (the caller gives back what it took); Replayed when ``keyed`` already has
    its notification. ``bulk``: on the bulk queue whatever the template's type."""
    notification_id = uuid.uuid4()
    bulk = _commit(resolved, notification_id, correlation_id, keyed, workspace_id) or bulk
    # Committed: from here the send is accepted; if Redis is down the reconciler enqueues it.
    try:
        enqueue_notification(str(notification_id), record=(
            keyed.record(workspace_id), keyed.done(correlation_id),
            idempotency.KEEP_SECONDS) if keyed is not None else None, bulk=bulk)
    except Exception as err:
        if (part := dependency_of(err)) is not None:
            incidents.failed(part, err)  # one line per incident; the reconciler enqueues it
        else:
            log.warning("notification %s accepted; its job was not enqueued (%s): the "
                        "reconciler enqueues it", notification_id, type(err).__name__)
    metrics.accepted(resolved.channel.name)
    log.info("notification accepted", extra={
        "notificationId": str(notification_id), "channel": resolved.channel.name,
        "workspaceId": str(resolved.workspace.id)})
    _accepted(str(notification_id), resolved.channel.name, str(resolved.workspace.id))
    return notification_id


def _commit(resolved: Resolved, notification_id: uuid.UUID, correlation_id: str,
            keyed: IdempotencyKey | None, workspace_id: str) -> bool:
    """Render and insert the notification row (one key, one row: ``insert_once``); True
    when its job goes to the bulk queue (docs/delivery.md, "Queues and fairness")."""
    started = time.perf_counter()
    rendered, errors = render_parts(resolved)
    metrics.rendered(resolved.channel.name, time.perf_counter() - started)
    if errors:
        raise rendering_failed(errors)
    built = payload(resolved, rendered)

    def insert() -> None:
        notification_store.insert(
            id=notification_id, account=resolved.account.id, workspace=resolved.workspace.id,
            template=resolved.template.id, version_number=resolved.version.number,
            channel=resolved.template.channel, correlation_id=correlation_id,
            delivery_id=str(uuid.uuid4()), payload=built,
            idempotency_key=keyed.key if keyed else None,
            idempotency_digest=keyed.digest if keyed else None)

    if keyed is not None:
        idempotency.insert_once(insert, keyed, workspace_id)
    else:
        insert()
    return is_bulk(resolved.template.channel, built)


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
