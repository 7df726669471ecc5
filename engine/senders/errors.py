"""The one error of sender verification: a refusal a person can read and act on."""

from __future__ import annotations


class SenderError(ValueError):
    """A refused sender request; ``field`` names the form field at fault, when one is."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field
