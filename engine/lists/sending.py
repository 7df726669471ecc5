"""``Send N notifications``: a checked list sent as one job.

Starting takes the whole list's units of the monthly allowance at once (or refuses, and
nothing is sent) and enqueues the list's job on the bulk queue. The job expands the list in
batches: each row goes through the send's one accept path (engine/sending/accepting.py,
the same rendering, payload, row and enqueue as an API send) with an Idempotency-Key of
the list's id and the row's number, so a job that runs twice (a retry, a worker killed
mid-batch) accepts no row twice. Between batches it records its progress and looks for a
cancel; after BATCH_SECONDS it enqueues its own continuation at the front of the bulk
queue: a worker busy with a list takes the priority queue's transactional jobs within a
second, and the list goes on before the deliveries of its own rows.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
import uuid
from collections import OrderedDict
from typing import Any

from peewee import Case, IntegrityError
from rq import Retry

from engine import runtime
from engine.catalog import snapshots
from engine.database.models import Notification, utcnow
from engine.database.models.lists import RecipientList
from engine.errors import ApiError
from engine.lists import cancelling, rows, zones
from engine.queue.queueing import BULK_QUEUE_NAME, queue
from engine.sending import allowance, idempotency
from engine.sending.accepting import Replayed, accept, accept_many, rendered_payload
from engine.sending.idempotency import IdempotencyKey

log = logging.getLogger("herald.lists")
BATCH_ROWS = 50
BATCH_SECONDS = 0.5
JOB_TIMEOUT = 600
RETRY_SECONDS = [5, 15, 30, 60, 120]
SENDING, SENT, CANCELLED, CHECKED = "sending", "sent", "cancelled", "checked"
SCHEDULED, FAILED = "scheduled", "failed"
LEASE_MS = 15_000  # a run renews it at least every BATCH_SECONDS plus one batch
class SendRefused(ValueError):
    """The list cannot be sent now; says why, for the person sending it."""


def correlation_id(list_id: uuid.UUID, row: int) -> str:
    """Each row's notification: found by the list (reports filter) and by its row."""
    return f"list-{list_id.hex}-{row}"


def start(kept: RecipientList, user_id: Any, *, scheduled: bool = False) -> bool:
    """Send the list: True when this call started it, False when it was started already
    (a double click, a retried form, another worker's pass). SendRefused when the allowance
    is short. ``scheduled``: a scheduled list whose time came (engine/lists/scheduling.py)."""
    account = kept.workspace.account
    if account.monthly_limit is None:
        raise SendRefused("The account has no monthly allowance configured.")
    was = SCHEDULED if scheduled else CHECKED
    if kept.status != was:
        return False
    account_id = str(account.id)
    if not allowance.take(account_id, account.monthly_limit, kept.row_count):
        raise SendRefused(f"The account's monthly allowance has fewer than "
                          f"{kept.row_count:,} notifications left: nothing was sent.")
    by = str(user_id) if user_id else kept.sent_by
    started = (RecipientList.update(status=SENDING, sent_by=by, sent_at=utcnow())
               .where(RecipientList.id == kept.id, RecipientList.status == was).execute())
    if not started:
        allowance.give_back(account_id, kept.row_count)
        return False
    try:
        enqueue(kept.id, 0)
    except Exception:
        if scheduled:  # started: the lists' pass enqueues its lost job when Redis is back
            log.warning("list %s started without its job: the next pass enqueues it",
                        kept.id, exc_info=True)
            return True
        # No job, so nothing would ever send it: back to checked, the allowance given back.
        RecipientList.update(status=CHECKED, sent_by=None, sent_at=None).where(
            RecipientList.id == kept.id).execute()
        allowance.give_back(account_id, kept.row_count)
        log.warning("list %s was not started: its job could not be enqueued", kept.id,
                    exc_info=True)
        raise SendRefused("The list could not be started (the queue is unavailable): "
                          "nothing was sent; try again.") from None
    return True


def pointer_key(list_id: uuid.UUID) -> str:
    """The Redis key naming the list's current job: gone with the job when Redis loses it."""
    return f"herald:list:{list_id.hex}:job"


def enqueue(list_id: uuid.UUID, cursor: int) -> None:
    """The list's job from row index ``cursor`` on, at the front of the bulk queue; a job
    that raises (the database away) is retried by RQ's scheduler, and runs its rows again
    harmlessly (each row's Idempotency-Key)."""
    job_id = f"list-{list_id.hex}-{cursor}"
    queue(BULK_QUEUE_NAME).enqueue(
        expand, str(list_id), job_id=job_id, job_timeout=JOB_TIMEOUT, result_ttl=0,
        failure_ttl=24 * 3600, at_front=True, retry=Retry(max=5, interval=RETRY_SECONDS))
    runtime.redis().set(pointer_key(list_id), job_id, ex=7 * 24 * 3600)


def lease_key(list_id: uuid.UUID) -> str:
    """Held while a run of the list's job works (renewed each batch): its absence while
    the job reads ``started`` says the worker running it died."""
    return f"herald:list:{list_id.hex}:lease"


def _hold(list_id: uuid.UUID) -> None:
    runtime.redis().set(lease_key(list_id), "1", px=LEASE_MS)


def _status(list_id: uuid.UUID) -> str:
    """The list's status now (a cancel from the web page lands here between batches)."""
    return RecipientList.select(RecipientList.status).where(
        RecipientList.id == list_id).scalar()


# Every column but the rows: a continuation reads its list's rows from _rows_of's cache.
_SUMMARY = [f for f in RecipientList._meta.sorted_fields if f.name != "rows"]
_CACHED_LISTS = 2
_rows_cache: OrderedDict[uuid.UUID, list] = OrderedDict()
_rows_lock = threading.Lock()


def _rows_of(list_id: uuid.UUID) -> list:
    """A sending list's rows, parsed once per process: they never change once it sends
    (``zones.arrange`` orders them before), and a 50,000-row list's job runs hundreds of
    half-second continuations, each of which would otherwise read and parse them all."""
    with _rows_lock:
        if list_id in _rows_cache:
            _rows_cache.move_to_end(list_id)
            return _rows_cache[list_id]
    found = RecipientList.select(RecipientList.rows).where(
        RecipientList.id == list_id).scalar() or []
    with _rows_lock:
        _rows_cache[list_id] = found
        while len(_rows_cache) > _CACHED_LISTS:
            _rows_cache.popitem(last=False)
    return found


def _why(err: ApiError) -> str:
    details = [m for messages in (err.errors or {}).values() for m in messages]
    return "; ".join(details) or err.detail


def _accept_batch(kept: RecipientList, snap: snapshots.TemplateSnapshot | None,
                  version: Any, batch: list[list]) -> list[tuple[int, str | None]]:
    """Each row of ``batch`` through the accept path, the rows accepted together (one
    INSERT, one enqueue round trip): (row number, None when accepted now or before, else
    why not). A row whose Idempotency-Key has its notification already (an earlier run)
    is not inserted again; should another run insert one meanwhile, the batch's rows go
    one by one, where ``accept`` answers the replays."""
    if version is None:
        return [(row[0], "the template or its version was deleted") for row in batch]
    outcomes: dict[int, str | None] = {}
    ready = []
    for number, recipient, values, *_ in batch:
        row = rows.RowRequest(str(kept.workspace_id), str(kept.template_id),
                              kept.version_number, kept.channel, recipient,
                              dict(zip(kept.columns[1:], values, strict=True)))
        request = row.body()
        keyed = IdempotencyKey(f"list:{kept.id.hex}:{number}", idempotency.digest(request))
        try:
            resolved = row.resolved(snap, version, request)  # checked at upload: no more
            ready.append((number, (resolved, rendered_payload(resolved),
                                   correlation_id(kept.id, number), keyed)))
        except ApiError as err:
            outcomes[number] = _why(err)
    keys = [item[3].key for _, item in ready]
    done = {key for (key,) in Notification.select(Notification.idempotency_key).where(
        Notification.workspace == kept.workspace_id,
        Notification.idempotency_key.in_(keys)).tuples()} if keys else set()
    fresh = [(number, item) for number, item in ready if item[3].key not in done]
    try:
        accept_many([item for _, item in fresh])
    except IntegrityError:  # another run accepted some meanwhile: one by one
        for number, item in fresh:
            outcomes[number] = _accept_one(*item)
    for number, _ in ready:
        outcomes.setdefault(number, None)
    return [(row[0], outcomes[row[0]]) for row in batch]


def _accept_one(resolved: Any, built: dict[str, Any], correlation: str,
                keyed: IdempotencyKey) -> str | None:
    """One row through ``accept``; None when accepted (now or before), else why not."""
    try:
        accept(resolved, built, correlation, keyed=keyed, bulk=True)
    except Replayed:
        return None  # accepted by an earlier run of this job
    except ApiError as err:
        return _why(err)
    return None


def expand(list_id: str) -> int:
    """The list's job: accept rows from where the list left off, in batches, for at most
    BATCH_SECONDS; then its continuation is enqueued, or the list is finished. Returns
    how many rows this run handled."""
    ident = uuid.UUID(list_id)
    kept = RecipientList.select(*_SUMMARY).where(RecipientList.id == ident).first()
    if kept is None:
        return 0
    _hold(ident)
    handled, deadline = 0, time.monotonic() + BATCH_SECONDS
    status, accepted, refused = kept.status, kept.accepted, list(kept.refused or [])
    snap = snapshots.snapshot(str(kept.workspace_id), str(kept.template_id))
    version = snap.version(kept.version_number) if snap is not None else None
    all_rows = _rows_of(ident) if status == SENDING else []
    waiting: dt.datetime | None = None
    while status == SENDING and accepted + len(refused) < len(all_rows) and waiting is None:
        cursor = accepted + len(refused)
        batch = []
        for row in all_rows[cursor:cursor + BATCH_ROWS]:
            moment = zones.due(row)
            if moment is not None and moment > utcnow():
                waiting = moment  # its local time has not come: the lists' pass resumes it
                break
            batch.append(row)
        for number, why in _accept_batch(kept, snap, version, batch):
            if why is None:
                accepted += 1
            else:
                refused.append([number, why])
            handled += 1
        # Progress only while still sending: a cancel made meanwhile stays, and stops here.
        RecipientList.update(accepted=accepted, refused=refused, resume_at=waiting).where(
            RecipientList.id == ident).execute()
        status = _status(ident)
        _hold(ident)
        left = accepted + len(refused) < len(all_rows)
        if waiting is not None and status == SENDING:
            runtime.redis().delete(lease_key(ident))
            return handled
        if time.monotonic() >= deadline and left and status == SENDING:
            enqueue(ident, accepted + len(refused))
            runtime.redis().delete(lease_key(ident))
            return handled
    _finish(kept, accepted)
    runtime.redis().delete(lease_key(ident))
    return handled


def _finish(kept: RecipientList, accepted: int) -> None:
    """Sent (or cancelled): once, the allowance units of rows not accepted given back."""
    done = (RecipientList.update(
        finished_at=utcnow(),
        status=Case(None, ((RecipientList.status == SENDING, SENT),), RecipientList.status))
        .where(RecipientList.id == kept.id, RecipientList.finished_at.is_null()).execute())
    if _status(kept.id) == CANCELLED:
        cancelling.stop_queued(kept)  # rows its last batch accepted while the cancel ran
    if done:
        allowance.give_back(str(kept.workspace.account_id), kept.row_count - accepted)
        log.info("list %s finished: %d of %d rows accepted", kept.id, accepted,
                 kept.row_count)

