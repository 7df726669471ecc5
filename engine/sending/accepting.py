"""The send itself: render, commit the notification row, enqueue its job, answer 202.

``accept`` is the one way a notification enters the pipeline: the API's send, the editor's
test send (engine/authoring/draft_sends.py) and any other sender of the house insert the row
and enqueue its job through it, so what an accepted notification is (its row, its queue,
its event) is decided here once.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from engine.catalog import keycache
from engine.database import notification_store
from engine.database.db import database
from engine.database.vocabulary import NotificationStatus
from engine.delivery.queue import enqueue_notifications, is_bulk
from engine.errors import ApiError
from engine.formats import uuid_text
from engine.observability import metrics
from engine.observability.outages import dependency_of, incidents
from engine.plugins.manager import default_registry
from engine.queue import unheard_commits
from engine.sending import allowance, idempotency
from engine.sending.admission import admit
from engine.sending.group_commit import GroupCommit
from engine.sending.idempotency import ACCEPTED_MESSAGE, IdempotencyKey, Replayed
from engine.sending.payload import payload, render_parts, rendering_failed
from engine.sending.resolution import Resolved

log = logging.getLogger("herald.api")

__all__ = ["Replayed", "accept", "accept_many", "send"]


def send(body: object, header: str | None, ip: str, correlation_id: str,
         parse_error: ApiError | None = None,
         idempotency_key: str | None = None,
         found: keycache.Found | None = None) -> dict[str, Any]:
    """202 SendResponse, or ApiError in the precedence of D1 (docs/api.md).

    With an ``idempotency_key`` (the header's value) a request the key has already seen
    raises Replayed, whose ``answer`` is the first request's. ``found``: the header's
    look-up earlier in the request (body_gate.py).
    """
    idem = idempotency.read_header(idempotency_key, body, parse_error)
    resolved, key = admit(body, header, ip, parse_error, preview=False, idem=idem,
                          correlation_id=correlation_id, found=found)
    account_id = uuid_text.of(resolved.account.id)
    workspace_id = key.workspace_id
    keyed = idem if idem is not None and idem.usable else None
    try:
        accept(resolved, rendered_payload(resolved), correlation_id, keyed=keyed)
    except BaseException:
        # Not accepted: give the allowance unit back (and the key's pending record).
        if keyed is not None:
            idempotency.release(keyed, workspace_id, correlation_id, account_id)
        else:
            allowance.give_back(account_id)
        raise
    keycache.touch(key)
    return {"accepted": True, "correlationId": correlation_id, "message": ACCEPTED_MESSAGE}


def rendered_payload(resolved: Resolved) -> dict[str, Any]:
    """The request's payload: each part rendered, then the channel's payload (raises the
    render's 400 when a part does not render)."""
    started = time.perf_counter()
    rendered, errors = render_parts(resolved)
    metrics.rendered(resolved.channel.name, time.perf_counter() - started)
    if errors:
        raise rendering_failed(errors)
    return payload(resolved, rendered)


def accept(resolved: Resolved, built: dict[str, Any], correlation_id: str, *,
           keyed: IdempotencyKey | None = None, is_test: bool = False,
           notification_id: uuid.UUID | None = None, bulk: bool = False) -> uuid.UUID:
    """Insert one notification of ``resolved`` with its payload ``built`` and enqueue its job;
    returns its id.

    Raises only while inserting (nothing is accepted then: the caller gives back what it
    took; a database lost meanwhile may have committed the row unheard, so its id is
    marked for the reconciler to drop, engine/queue/unheard_commits.py). Once the row is
    committed the notification is accepted: a job that cannot be enqueued is left to the
    reconciler. ``keyed``: the Idempotency-Key the row is unique by, its record written
    with the job. ``is_test``: an editor's test send (no allowance, left out of reports
    and metrics, no ``notification_accepted`` event, the default queue).
    ``notification_id``: the id to give it (a new one by default). ``bulk``: on the bulk
    queue whatever the template's type (each row of a list, engine/lists/).
    """
    workspace_id = uuid_text.of(resolved.workspace.id)
    channel = resolved.template.channel
    notification_id = notification_id or uuid.uuid4()
    nid = str(notification_id)
    row = _row(resolved, built, correlation_id, keyed, is_test, notification_id)
    queued_bulk = not is_test and (bulk or is_bulk(channel, built))
    try:
        # With the sends beside it: one INSERT, one commit, one enqueue round trip (whose
        # call for a keyed send also marks the key's record done). Redis gone after the
        # commit, the send is accepted all the same and the reconciler enqueues its job.
        if keyed is None:
            _group().submit(row, (nid, queued_bulk, workspace_id))
        else:
            job = (nid, queued_bulk, workspace_id, (
                keyed.record(workspace_id), keyed.done(correlation_id),
                idempotency.KEEP_SECONDS))
            idempotency.insert_once(lambda: _group().submit(row, job), keyed, workspace_id)
    except BaseException as err:
        if dependency_of(err) == "database":  # the commit may have happened unheard
            unheard_commits.mark(nid, correlation_id)
        raise
    if not is_test:
        metrics.accepted(resolved.channel.name)
        log.info("notification accepted", extra={
            "notificationId": nid, "channel": resolved.channel.name,
            "workspaceId": workspace_id})
        _accepted(nid, resolved.channel.name, workspace_id)
    return notification_id


def _row(resolved: Resolved, built: dict[str, Any], correlation_id: str,
         keyed: IdempotencyKey | None, is_test: bool, notification_id: uuid.UUID) -> tuple:
    return notification_store.row(
        id=notification_id, account=resolved.account.id, workspace=resolved.workspace.id,
        template=resolved.template.id, version_number=resolved.version.number,
        channel=resolved.template.channel, is_test=is_test, correlation_id=correlation_id,
        delivery_id=uuid_text.random_text(), payload=built,
        idempotency_key=keyed.key if keyed else None,
        idempotency_digest=keyed.digest if keyed else None)


def accept_many(items: list[tuple[Resolved, dict[str, Any], str, IdempotencyKey]]) -> None:
    """``accept`` for many keyed notifications of one workspace at once, each on the bulk
    queue (a list's batch, engine/lists/): one INSERT in one transaction, one enqueue round
    trip. All or none: IntegrityError when any key has its notification already (the
    caller then accepts them one by one, and ``accept`` answers the replays)."""
    if not items:
        return
    ids = [uuid.uuid4() for _ in items]
    rows = [_row(resolved, built, correlation_id, keyed, False, nid)
            for (resolved, built, correlation_id, keyed), nid in zip(items, ids, strict=True)]
    workspace_id = str(items[0][0].workspace.id)
    try:
        with database.atomic():
            notification_store.insert_rows(rows)
    except BaseException as err:
        if dependency_of(err) == "database":  # the commit may have happened unheard
            for nid, (_, _, correlation_id, _) in zip(ids, items, strict=True):
                unheard_commits.mark(str(nid), correlation_id)
        raise
    try:  # committed: accepted; Redis gone, the reconciler enqueues them
        enqueue_notifications([(str(nid), True, workspace_id) for nid in ids])
    except Exception as err:
        if (part := dependency_of(err)) is not None:
            incidents.failed(part, err)
        else:
            log.warning("%d notifications accepted; their jobs were not enqueued (%s): the "
                        "reconciler enqueues them", len(ids), type(err).__name__)
    for nid, (resolved, _, _, _) in zip(ids, items, strict=True):
        metrics.accepted(resolved.channel.name)
        _accepted(str(nid), resolved.channel.name, workspace_id)


_groups: GroupCommit | None = None


def _group() -> GroupCommit:
    """This process's group commit (one for all its threads, made on first use)."""
    global _groups
    if _groups is None:
        _groups = GroupCommit(notification_store.insert_rows, enqueue_notifications)
    return _groups


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
