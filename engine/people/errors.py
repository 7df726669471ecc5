"""The one error the people services raise: what was wrong, and which field it belongs to."""

from __future__ import annotations


class PeopleError(ValueError):
    """A refused action; ``field`` names the form field to mark (None: the whole form)."""

    def __init__(self, message: str, field: str | None = None, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.status = status
