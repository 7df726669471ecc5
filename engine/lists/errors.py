"""What the list readers refuse."""

from __future__ import annotations


class FileRefused(ValueError):
    """A file that cannot be read as a list at all; says why, for the person uploading."""
