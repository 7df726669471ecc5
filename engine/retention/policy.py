"""A workspace's retention: how many days its notifications keep recipients and content."""

from __future__ import annotations

from typing import Any

from engine.database import generations
from engine.database.models import Workspace

MIN_DAYS = 1
MAX_DAYS = 3650
DEFAULT_DAYS = 30


class RetentionError(ValueError):
    """A retention that is not a whole number of days from MIN_DAYS to MAX_DAYS."""


def parse_days(value: Any) -> int:
    """A retention in days from a form, a file or the command line; RetentionError else."""
    if isinstance(value, bool):
        raise RetentionError(f"a whole number of days from {MIN_DAYS} to {MAX_DAYS}")
    text = str(value).strip() if value is not None else ""
    try:
        days = int(text) if not isinstance(value, int) else value
    except ValueError:
        raise RetentionError(f"a whole number of days from {MIN_DAYS} to {MAX_DAYS}") from None
    if not MIN_DAYS <= days <= MAX_DAYS:
        raise RetentionError(f"a whole number of days from {MIN_DAYS} to {MAX_DAYS}")
    return days


def set_days(workspace_id: Any, days: int | None) -> None:
    """Set the workspace's retention (None: keep forever); the next purge applies it."""
    Workspace.update(retention_days=days).where(Workspace.id == workspace_id).execute()
    generations.changed_workspace(workspace_id)
