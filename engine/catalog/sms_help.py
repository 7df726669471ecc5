"""A workspace's answer to an SMS recipient who writes HELP (docs/delivery.md, "SMS
keywords"): carriers expect one for application-to-person SMS. Set in Settings > Topics or
as ``smsHelpText`` in ``herald apply``; without one, HELP is recorded and not answered."""

from __future__ import annotations

from typing import Any

from engine.database.models import Workspace

# Two SMS segments of plain text: room for who is writing and how to stop.
MAX_HELP_TEXT = 320


class HelpTextError(ValueError):
    """A help text that cannot be kept."""


def set_help_text(workspace_id: Any, text: str | None) -> str | None:
    """Keep the workspace's HELP answer (empty: none); the text kept."""
    text = (text or "").replace("\r\n", "\n").strip() or None
    if text is not None and len(text) > MAX_HELP_TEXT:
        raise HelpTextError(f"At most {MAX_HELP_TEXT} characters.")
    Workspace.update(sms_help_text=text).where(Workspace.id == workspace_id).execute()
    return text


def help_text(workspace_id: Any) -> str | None:
    row = Workspace.select(Workspace.sms_help_text).where(Workspace.id == workspace_id).first()
    return row.sms_help_text if row is not None else None
