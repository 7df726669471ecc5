"""The two errors the rendering package raises."""

from __future__ import annotations


class TemplateSyntaxError(ValueError):
    """A template uses syntax outside the supported subset; names where (1-based)."""

    def __init__(self, message: str, line: int, column: int, part: str | None = None) -> None:
        self.message = message
        self.line = line
        self.column = column
        self.part = part
        super().__init__(f"line {line}, column {column}: {message}")


class RenderError(Exception):
    """A part could not be rendered (output too large, work budget spent, bad stored code)."""
