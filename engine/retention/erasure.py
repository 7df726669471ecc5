"""The erasure of one person (an address or a number) from a workspace, at once: every
notification, event, list row, callback and caught message of theirs purged as the
retention purges (engine/retention/scrub.py), their suppression kept as a keyed hash that
the send path still applies, audit entries that named them rewritten to the hash, and the
erasure itself audited with counts, never the address (docs/operations.md, "Erasure")."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from typing import Any

from peewee import fn

from engine.catalog import suppression_cache
from engine.database import generations
from engine.database.db import database
from engine.database.models import Notification, Suppression, Workspace
from engine.database.models.inbox import CaughtWebhook, InboxMessage
from engine.database.models.lists import RecipientList
from engine.database.models.people import AuditEvent, User
from engine.database.models.recipients import InboundMessage
from engine.database.models.reports import NotificationLookup
from engine.database.models.retention import PurgeWaiting
from engine.database.secrets import recipient_hash
from engine.formats.addresses import suppression_key
from engine.people import audit
from engine.reports import lookup
from engine.reports.recipients import payload_recipients
from engine.retention import scrub

BATCH = 500
# A list being sent is left to finish (its job reads its rows); any other list loses the
# person's rows at once (a scheduled one then never sends to them).
LIST_BUSY = ("sending",)


class ErasureError(ValueError):
    """Not an address or a number to erase."""


def check(value: str) -> str:
    """The suppression key ``value`` names; ErasureError when it names none."""
    return _key(value)


def _key(value: str) -> str:
    key = suppression_key(value or "")
    if not key or len(key) > 320 or any(c.isspace() for c in key):
        raise ErasureError("give one email address or phone number")
    return key


def _notifications(workspace_id: Any, key: str) -> list[uuid.UUID]:
    """The workspace's notifications addressed to ``key``: through the search index (as a
    plain or hashed term) and, for rows it has not reached yet, through the rows."""
    terms = (key, recipient_hash(key))
    found = {uuid.UUID(str(nid)) for (nid,) in NotificationLookup.select(
        NotificationLookup.notification).where(
        NotificationLookup.workspace == workspace_id, NotificationLookup.kind == "r",
        NotificationLookup.term.in_(terms)).tuples()}
    # Rows the index has not reached: a substring first, then each payload's recipients
    # exactly (an address with "_" or "%" must not find another's).
    recent = Notification.select(Notification.id, Notification.payload).where(
        Notification.workspace == workspace_id,
        fn.LOWER(Notification.payload).contains(key))
    since = lookup.tail_from()
    if since is not None:
        recent = recent.where(Notification.created_at >= since)
    found |= {row.id for row in recent if key in payload_recipients(row.payload)}
    return sorted(found)


def _without(value: Any, key: str) -> tuple[Any, int]:
    """A JSON list without the entries that name ``key``; (value, entries dropped)."""
    if not isinstance(value, list):
        return value, 0
    kept = [entry for entry in value if key not in json.dumps(entry, ensure_ascii=False).lower()]
    return kept, len(value) - len(kept)


def _problems_without(problems: Any, key: str) -> Any:
    """A refused list's problems (``items`` and the file's ``table`` of rows) without the
    entries naming ``key``."""
    if not isinstance(problems, dict):
        return _without(problems, key)[0]
    kept = dict(problems)
    kept["items"] = _without(problems.get("items"), key)[0]
    if isinstance(problems.get("table"), dict):
        kept["table"] = {**problems["table"],
                         "rows": _without(problems["table"].get("rows"), key)[0]}
    return kept


def _lists(workspace_id: Any, key: str, done: Counter) -> None:
    """Each list of the workspace loses the rows, refusals and problems naming ``key``."""
    for row in RecipientList.select().where(RecipientList.workspace == workspace_id):
        text = json.dumps([row.rows, row.refused, row.problems, row.problem],
                          ensure_ascii=False).lower()
        if key not in text:
            continue
        if row.status in LIST_BUSY:
            done["listsBusy"] += 1
            continue
        rows, dropped = _without(row.rows, key)
        refused, _ = _without(row.refused, key)
        problems = _problems_without(row.problems, key)
        problem = row.problem if key not in (row.problem or "").lower() else "(erased)"
        RecipientList.update(rows=rows, refused=refused, problems=problems,
                             problem=problem).where(RecipientList.id == row.id).execute()
        done["listRows"] += dropped


def _suppression(workspace_id: Any, key: str, done: Counter) -> None:
    """The address's suppression, kept as its keyed hash: the claim checks the recipients'
    hashes too once the workspace has one (engine/database/notification_store.py)."""
    rows = list(Suppression.select().where(Suppression.workspace == workspace_id,
                                           Suppression.address == key))
    if not rows:
        return
    hashed = recipient_hash(key)
    for row in rows:  # one a scope (all, marketing, a topic)
        if Suppression.select().where(Suppression.workspace == workspace_id,
                                      Suppression.address == hashed,
                                      Suppression.scope == row.scope).exists():
            Suppression.delete().where(Suppression.id == row.id).execute()
        else:
            Suppression.update(address=hashed).where(Suppression.id == row.id).execute()
    Workspace.update(hashed_suppressions=True).where(Workspace.id == workspace_id).execute()
    generations.changed_workspace(workspace_id)
    generations.changed_suppressions(workspace_id)
    done["suppressionsKept"] += len(rows)


def _audit_log(workspace_id: Any, key: str, done: Counter) -> None:
    """Audit entries that named the address (a suppression added by hand, say) name its
    hash instead: the log keeps what happened, not to whom."""
    hashed = recipient_hash(key)
    for event in AuditEvent.select().where(AuditEvent.workspace == workspace_id):
        subject = event.subject or ""
        details = json.dumps(event.details or {}, ensure_ascii=False)
        if key not in subject.lower() and key not in details.lower():
            continue
        AuditEvent.update(
            subject=_replaced(subject, key, hashed),
            details=json.loads(_replaced(details, key, hashed))).where(
            AuditEvent.id == event.id).execute()
        done["auditEntries"] += 1


def _replaced(text: str, key: str, hashed: str) -> str:
    lowered, out, start = text.lower(), [], 0
    while (at := lowered.find(key, start)) >= 0:
        out += [text[start:at], hashed]
        start = at + len(key)
    return "".join([*out, text[start:]])


def erase(workspace_id: Any, value: str, actor: User | None = None) -> dict[str, Any]:
    """Erase ``value`` (an address or a number) from the workspace; what it removed."""
    key = _key(value)
    workspace = Workspace.get_by_id(workspace_id)
    done: Counter = Counter({name: 0 for name in (*scrub.COUNTED, "inboundMessages",
                                                  "waiting", "listRows",
                                                  "listsBusy", "suppressionsKept",
                                                  "auditEntries")})
    ids = _notifications(workspace.id, key)
    for start in range(0, len(ids), BATCH):
        batch = ids[start:start + BATCH]
        done.update(scrub.scrub(workspace.id, batch))
        unfinished = [nid for (nid,) in Notification.select(Notification.id).where(
            Notification.id.in_(batch),
            Notification.status.not_in([str(s) for s in scrub.FINISHED])).tuples()]
        if unfinished:  # purged by the first purge that finds it finished
            PurgeWaiting.insert_many([{"notification_id": nid, "workspace": workspace.id}
                                      for nid in unfinished]).on_conflict_ignore().execute()
            done["waiting"] += len(unfinished)
    with database.atomic():
        done["callbacks"] += scrub.erase_callbacks(workspace.id, key, ids)
        done["caughtWebhooks"] += CaughtWebhook.delete().where(
            CaughtWebhook.workspace_id == str(workspace.id),
            fn.LOWER(CaughtWebhook.body).contains(key)).execute()
        done["inboxMessages"] += InboxMessage.delete().where(
            InboxMessage.workspace_id == str(workspace.id),
            fn.LOWER(InboxMessage.to).contains(key) | fn.LOWER(InboxMessage.cc).contains(key)
            | fn.LOWER(InboxMessage.bcc).contains(key) | fn.LOWER(InboxMessage.raw)
            .contains(key)).execute()
        done["inboundMessages"] += InboundMessage.delete().where(
            InboundMessage.workspace == workspace.id,
            fn.LOWER(InboundMessage.sender) == key).execute()
        _lists(workspace.id, key, done)
        _suppression(workspace.id, key, done)
        _audit_log(workspace.id, key, done)
    suppression_cache.forget(workspace.id)
    result = {"workspaceId": str(workspace.id), **done}
    audit.record(workspace, actor, "data.erased", "a recipient", dict(done))
    return result
