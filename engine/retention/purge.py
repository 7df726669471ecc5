"""The purge: each workspace's notifications older than its retention lose what identifies
or reveals (engine/retention/scrub.py), batch by batch, each batch its own short
transaction, so a send is never held for more than one batch's moment.

Each workspace's run goes on from its mark (PurgeMark: everything before it is purged),
so a day's run reads only the day's rows. A notification still queued or sending when its
turn comes (scheduled, retrying, a backlog) is never touched: it waits in PurgeWaiting and
is purged by the first run that finds it finished. Recipient lists finished (sent or
cancelled) lose their rows and file name alike. Every purge that removed something writes
an audit entry in its workspace, with its counts.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
import uuid
from collections import Counter
from typing import Any

from engine import runtime
from engine.database.db import database
from engine.database.models import Notification, Workspace, utcnow
from engine.database.models.lists import RecipientList
from engine.database.models.recipients import InboundMessage
from engine.database.models.retention import PurgeMark, PurgeWaiting
from engine.people import audit
from engine.retention import scrub

log = logging.getLogger("herald.retention")
BATCH = 500  # notifications a transaction: what one batch holds locked
LISTS = ("sent", "cancelled")  # a list still checked, scheduled or sending is left alone
# The daily run: after this UTC hour, once a day, by one worker (a Redis lock).
HOUR = 3
CHECK_SECONDS = 600.0
RUN_SECONDS = 1800.0  # a run stops after this long; the next check goes on
LOCK_KEY = "herald:data:purge:lock"
# What a run counts beside scrub.COUNTED; a run writes an audit entry when any moved.
REMOVED = (*scrub.COUNTED, "lists", "inboundMessages")
DONE_KEY = "herald:data:purge:done"
EPOCH = dt.datetime(1970, 1, 1)


def cutoff(workspace: Workspace, as_of: dt.datetime) -> dt.datetime | None:
    """Notifications created before this are past the workspace's retention (None: kept
    forever, a workspace made before retention existed and not set since)."""
    if workspace.retention_days is None:
        return None
    return as_of - dt.timedelta(days=workspace.retention_days)


def _waiting(workspace_id: Any, dry_run: bool, done: Counter) -> None:
    """The notifications that waited for their delivery to finish: purged if it has."""
    ids = [row.notification_id for row in PurgeWaiting.select(PurgeWaiting.notification_id)
           .where(PurgeWaiting.workspace == workspace_id)]
    for start in range(0, len(ids), BATCH):
        batch = ids[start:start + BATCH]
        done.update(scrub.scrub(workspace_id, batch, dry_run=dry_run))
        if dry_run:
            continue
        finished = [nid for (nid,) in Notification.select(Notification.id).where(
            Notification.id.in_(batch),
            Notification.status.in_([str(s) for s in scrub.FINISHED])).tuples()]
        gone = set(batch) - {nid for (nid,) in Notification.select(Notification.id).where(
            Notification.id.in_(batch)).tuples()}
        PurgeWaiting.delete().where(PurgeWaiting.notification_id.in_(
            [*finished, *gone])).execute()


def _walk(workspace_id: Any, limit: dt.datetime, dry_run: bool, deadline: float,
          done: Counter) -> bool:
    """From the workspace's mark up to ``limit``, a batch at a time; True when it got there."""
    mark = PurgeMark.get_or_none(PurgeMark.workspace == workspace_id)
    since = mark.purged_before if mark else EPOCH
    after: tuple[dt.datetime, uuid.UUID] | None = None
    while True:
        query = Notification.select(Notification.id, Notification.created_at,
                                    Notification.status).where(
            Notification.workspace == workspace_id, Notification.created_at >= since,
            Notification.created_at < limit)
        if after is not None:
            query = query.where((Notification.created_at > after[0]) | (
                (Notification.created_at == after[0]) & (Notification.id > after[1])))
        rows = list(query.order_by(Notification.created_at, Notification.id)
                    .limit(BATCH).tuples())
        if not rows:
            break
        unfinished = [nid for nid, _, status in rows if status not in scrub.FINISHED]
        done["waiting"] += len(unfinished)
        done.update(scrub.scrub(workspace_id, [nid for nid, _, _ in rows], dry_run=dry_run))
        if not dry_run:
            with database.atomic():
                if unfinished:
                    PurgeWaiting.insert_many(
                        [{"notification_id": nid, "workspace": workspace_id}
                         for nid in unfinished]).on_conflict_ignore().execute()
                _set_mark(workspace_id, rows[-1][1])  # ties at that instant: read again
        after = (rows[-1][1], rows[-1][0])
        if len(rows) < BATCH:
            break
        if time.monotonic() > deadline:
            return False
    if not dry_run:
        _set_mark(workspace_id, limit)
    return True


def _set_mark(workspace_id: Any, at: dt.datetime) -> None:
    (PurgeMark.insert(workspace=workspace_id, purged_before=at)
     .on_conflict(conflict_target=[PurgeMark.workspace],
                  update={PurgeMark.purged_before: at}).execute())


def _lists(workspace_id: Any, limit: dt.datetime, dry_run: bool, done: Counter) -> None:
    """Finished recipient lists uploaded before ``limit`` lose their file's rows and name."""
    lists = RecipientList.select(RecipientList.id).where(
        RecipientList.workspace == workspace_id, RecipientList.created_at < limit,
        RecipientList.status.in_(LISTS), RecipientList.filename != "(purged)")
    found = [row.id for row in lists]
    done["lists"] += len(found)
    if found and not dry_run:
        RecipientList.update(rows=[], refused=[], columns=[], problems=None, problem=None,
                             filename="(purged)").where(
            RecipientList.id.in_(found)).execute()


def purge_workspace(workspace: Workspace, as_of: dt.datetime, dry_run: bool = False,
                    deadline: float | None = None) -> dict[str, Any]:
    """Purge one workspace as of ``as_of``: what it removed (or would)."""
    done: Counter = Counter({name: 0 for name in (*REMOVED, "waiting")})
    limit = cutoff(workspace, as_of)
    result: dict[str, Any] = {"workspaceId": str(workspace.id),
                              "retentionDays": workspace.retention_days,
                              "before": limit.isoformat() + "Z" if limit else None}
    _waiting(workspace.id, dry_run, done)  # an erasure's too, whatever the retention
    if limit is None:
        return {**result, **done, "complete": True}
    deadline = deadline if deadline is not None else time.monotonic() + RUN_SECONDS
    complete = _walk(workspace.id, limit, dry_run, deadline, done)
    _lists(workspace.id, limit, dry_run, done)
    inbound = InboundMessage.select().where(InboundMessage.workspace == workspace.id,
                                            InboundMessage.received_at < limit)
    done["inboundMessages"] += inbound.count()
    if not dry_run:
        InboundMessage.delete().where(InboundMessage.workspace == workspace.id,
                                      InboundMessage.received_at < limit).execute()
    done["waiting"] = (done["waiting"] if dry_run else PurgeWaiting.select().where(
        PurgeWaiting.workspace == workspace.id).count())
    result.update(done, complete=complete)
    if not dry_run and any(done[k] for k in REMOVED):
        audit.record(workspace, None, "data.purged", f"{done['notifications']} notifications",
                     {k: done[k] for k in REMOVED} | {
                         "before": result["before"]})
    return result


def purge(workspace_id: Any = None, as_of: dt.datetime | None = None, dry_run: bool = False,
          run_seconds: float = RUN_SECONDS) -> dict[str, Any]:
    """`herald data purge`: every workspace (or one) as of ``as_of`` (now by default)."""
    as_of = as_of or utcnow()
    query = Workspace.select().order_by(Workspace.created_at, Workspace.id)
    if workspace_id is not None:
        query = query.where(Workspace.id == workspace_id)
    deadline = time.monotonic() + run_seconds
    workspaces = [purge_workspace(ws, as_of, dry_run, deadline) for ws in query]
    totals = {k: sum(w[k] for w in workspaces) for k in (*REMOVED, "waiting")}
    return {"asOf": as_of.isoformat() + "Z", "dryRun": dry_run,
            "complete": all(w["complete"] for w in workspaces), **totals,
            "workspaces": workspaces}


def due(now: dt.datetime, done_day: str | None) -> bool:
    """Whether the daily run is due: past HOUR UTC, and not done today yet."""
    return now.hour >= HOUR and done_day != now.date().isoformat()


def run_periodically(stop: threading.Event, interval: float = CHECK_SECONDS) -> None:
    """Until ``stop`` is set: every ``interval``, whichever worker takes the lock runs the
    day's purge if it is due; a run cut short by RUN_SECONDS goes on at the next check."""
    while not stop.wait(interval):
        try:
            redis = runtime.redis()
            lock = redis.lock(LOCK_KEY, timeout=RUN_SECONDS * 2)
            if not lock.acquire(blocking=False):
                continue
            try:
                now = utcnow()
                done_day = redis.get(DONE_KEY)
                if due(now, done_day.decode() if isinstance(done_day, bytes) else done_day):
                    database.connect(reuse_if_open=True)
                    result = purge(as_of=now)
                    if result["complete"]:
                        redis.set(DONE_KEY, now.date().isoformat(), ex=3 * 86400)
                    log.info("data purge: %s", {k: result[k] for k in scrub.COUNTED})
            finally:
                lock.release()
        except Exception:
            log.exception("data purge failed")
