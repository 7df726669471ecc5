"""A file checked and, when nothing is wrong with it, kept as a RecipientList: its rows stay
on the server (keyed by the list's id), never in a form the browser posts back."""

from __future__ import annotations

from typing import Any

from engine.lists import checking, reading
from engine.lists.checking import Checked, Problem
from engine.store.models import RecipientList, Template, Workspace


def upload(workspace: Workspace, template: Template, filename: str, data: bytes,
           user_id: Any) -> tuple[Checked, RecipientList | None]:
    """The check of the file, and the kept list when it passed (else None: nothing kept)."""
    column = checking.rows.RECIPIENT_COLUMNS.get(template.channel, "recipient")
    try:
        sheet = reading.read(data, filename)
    except reading.FileRefused as err:
        checked = Checked(template.channel, column)
        checked.add(Problem(None, str(err)))
        return checked, None
    checked = checking.check(workspace, template, sheet)
    if not checked.ok:
        return checked, None
    assert checked.version is not None
    kept = RecipientList.create(
        workspace=workspace, template=template, version_number=checked.version.number,
        channel=template.channel, filename=(filename or "recipients.csv")[:255],
        columns=[checked.recipient_column, *checked.tags], rows=checked.rows,
        row_count=checked.count, uploaded_by=str(user_id) if user_id else None)
    return checked, kept


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
