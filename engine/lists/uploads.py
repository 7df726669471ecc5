"""A file uploaded, checked off the request thread and, when nothing is wrong with it, kept
as a RecipientList: its rows stay on the server (keyed by the list's id), never in a form
the browser posts back.

The request only copies the upload to a file on disk (at most MAX_FILE_BYTES, in chunks)
and records the list as ``checking``; the check reads that file as it streams, in a pool of
CHECK_THREADS threads a process (engine/lists/background.py), so however many files arrive
at once a process holds the rows of CHECK_THREADS of them in memory and no request thread
is held by a check. A workspace has at most IN_PROGRESS files being uploaded or checked at
once, across processes (a Redis count); another is refused until one ends. The slot is taken
before the request's body is read (take_slot), so a refused upload costs its request no more
than its headers. A file that fails the check is kept as ``refused`` with its problems until
its page has shown them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import logging
import os
import tempfile
from typing import IO, Any

from engine import runtime
from engine.database.models import Template, Workspace, utcnow
from engine.database.models.lists import RecipientList
from engine.lists import background, checking, expiry, reading
from engine.lists.checking import Checked, Problem

log = logging.getLogger("herald.lists")
IN_PROGRESS = 2  # files of one workspace being uploaded or checked at once, across processes
SLOT_SECONDS = 15 * 60  # a slot a dead process held frees itself after this
CHECK_STALE = dt.timedelta(minutes=15)  # a check not ended by then never will (a restart)
CHUNK = 64 * 1024
CHECKING, REFUSED = "checking", "refused"
# A slot is taken only while fewer than the limit are; the count expires with a dead holder.
_TAKE_SLOT = """
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then return 0 end
redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return 1
"""
_FREE_SLOT = """
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n > 0 then redis.call('DECR', KEYS[1]) end
return 1
"""


class Busy(ValueError):
    """The workspace has IN_PROGRESS files being uploaded or checked already."""


def _slot_key(workspace_id: Any) -> str:
    return f"herald:lists:checking:{workspace_id}"


def take_slot(workspace: Workspace) -> None:
    """One of the workspace's IN_PROGRESS slots, taken before the upload's body is read; Busy
    when none is free. The holder passes it to begin, or gives it back with free_slot."""
    if not int(runtime.redis().eval(_TAKE_SLOT, 1, _slot_key(workspace.id), IN_PROGRESS,
                                    SLOT_SECONDS)):
        raise Busy(f"{IN_PROGRESS} files of this workspace are being uploaded or checked: "
                   "wait until one is done, then upload again.")


def free_slot(workspace: Workspace) -> None:
    """A slot taken with take_slot given back (the upload ended before begin)."""
    runtime.redis().eval(_FREE_SLOT, 1, _slot_key(workspace.id))


def begin(workspace: Workspace, template: Template, filename: str, upload: IO[bytes],
          user_id: Any) -> RecipientList:
    """The upload saved to disk and its check started, in a slot the caller took
    (take_slot): the list, ``checking``, whose check frees the slot when it ends.
    FileRefused when the file is too large (the slot freed)."""
    try:
        expiry.expire(workspace.id)  # room for this one: the oldest unsent beyond the limit go
        path = _saved(upload)
    except BaseException:
        free_slot(workspace)
        raise
    try:
        kept = RecipientList.create(
            workspace=workspace, template=template, version_number=0, channel=template.channel,
            filename=(filename or "recipients.csv")[:255], status=CHECKING, row_count=0,
            uploaded_by=str(user_id) if user_id else None)
    except BaseException:
        os.unlink(path)
        free_slot(workspace)
        raise
    background.submit(_check_saved, str(kept.id), path, str(workspace.id))
    return kept


def _saved(upload: IO[bytes]) -> str:
    """The upload copied to a file of its own, chunk by chunk (never whole in memory)."""
    handle, path = tempfile.mkstemp(prefix="herald-list-")
    try:
        with os.fdopen(handle, "wb") as out:
            copied = 0
            while chunk := upload.read(CHUNK):
                copied += len(chunk)
                if copied > reading.MAX_FILE_BYTES:
                    raise reading.FileRefused(
                        f"The file is larger than {reading.MAX_FILE_BYTES // (1024 * 1024)} MB.")
                out.write(chunk)
    except BaseException:
        os.unlink(path)
        raise
    return path


def _check_saved(list_id: str, path: str, workspace_id: str) -> None:
    """The pool's task: the saved file checked, the list made ``checked`` or ``refused``;
    the file removed and the workspace's slot freed whatever happens."""
    try:
        kept = RecipientList.get_or_none(RecipientList.id == list_id)
        if kept is None:
            return
        with open(path, "rb") as binary:
            checked = check_file(kept.workspace, kept.template, binary, kept.filename)
        record(kept, checked)
    except Exception:
        log.exception("the check of list %s failed", list_id)
        RecipientList.update(status=REFUSED, problems={
            "badRows": 0, "items": [[None, "The file could not be checked: upload it again."]]}
        ).where(RecipientList.id == list_id, RecipientList.status == CHECKING).execute()
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
        with contextlib.suppress(Exception):
            runtime.redis().eval(_FREE_SLOT, 1, _slot_key(workspace_id))


def check_file(workspace: Workspace, template: Template, binary: IO[bytes],
               filename: str) -> Checked:
    """The check of the file (FileRefused as a problem of the file)."""
    column = checking.rows.recipient_column(template.channel) or "recipient"
    try:
        sheet = reading.read_stream(binary, filename)
    except reading.FileRefused as err:
        checked = Checked(template.channel, column)
        checked.add(Problem(None, str(err)))
        return checked
    return checking.check(workspace, template, sheet)


def record(kept: RecipientList, checked: Checked) -> None:
    """The check's verdict on the list: its rows kept, or its problems."""
    if not checked.ok:
        RecipientList.update(status=REFUSED, problems={
            "badRows": checked.bad_rows, "table": checked.table,
            "items": [[p.row, p.message, p.column] for p in checked.problems]}).where(
            RecipientList.id == kept.id, RecipientList.status == CHECKING).execute()
        return
    assert checked.version is not None
    RecipientList.update(
        status="checked", version_number=checked.version.number,
        columns=[checked.recipient_column, *checked.tags], rows=checked.rows,
        row_count=checked.count, created_at=utcnow()).where(
        RecipientList.id == kept.id, RecipientList.status == CHECKING).execute()


def upload(workspace: Workspace, template: Template, filename: str, data: bytes,
           user_id: Any) -> tuple[Checked, RecipientList | None]:
    """The file checked here and now (the command line, tests): the check, and the kept
    list when it passed (else None: nothing kept)."""
    if len(data) > reading.MAX_FILE_BYTES:
        checked = Checked(template.channel, checking.rows.recipient_column(
            template.channel) or "recipient")
        checked.add(Problem(None, f"The file is larger than "
                                  f"{reading.MAX_FILE_BYTES // (1024 * 1024)} MB."))
        return checked, None
    checked = check_file(workspace, template, io.BytesIO(data), filename)
    if not checked.ok:
        return checked, None
    assert checked.version is not None
    kept = RecipientList.create(
        workspace=workspace, template=template, version_number=checked.version.number,
        channel=template.channel, filename=(filename or "recipients.csv")[:255],
        columns=[checked.recipient_column, *checked.tags], rows=checked.rows,
        row_count=checked.count, uploaded_by=str(user_id) if user_id else None)
    return checked, kept


def refusal(kept: RecipientList) -> Checked | None:
    """A refused (or never finished) check's problems, as the upload page shows them."""
    column = checking.rows.recipient_column(kept.channel) or "recipient"
    if kept.status == CHECKING and utcnow() - kept.created_at > CHECK_STALE:
        checked = Checked(kept.channel, column)
        checked.add(Problem(None, "The check of this file did not finish (the server "
                                  "restarted): upload it again."))
        return checked
    if kept.status != REFUSED:
        return None
    found = kept.problems or {}
    checked = Checked(kept.channel, column)
    checked.problems = [Problem(row, message, *column)
                        for row, message, *column in found.get("items", [])]
    checked.bad_rows = int(found.get("badRows", 0))
    checked.table = found.get("table")
    return checked


def find(workspace: Workspace, list_id: Any) -> RecipientList | None:
    """A list of this workspace, or None (another workspace's is none)."""
    try:
        return RecipientList.get_or_none(RecipientList.id == list_id,
                                          RecipientList.workspace == workspace)
    except ValueError:
        return None


def tags_of(kept: RecipientList, index: int = 0) -> dict[str, str]:
    """The tags of the list's ``index``-th row (its preview)."""
    rows = kept.rows or []
    if index >= len(rows):
        return {}
    return dict(zip(kept.columns[1:], rows[index][2], strict=True))


