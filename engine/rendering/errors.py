"""The two errors the rendering package raises."""

from __future__ import annotations


class TemplateSyntaxError(ValueError):
    """A template uses syntax outside the supported subset; names where (1-based).

    str() is "line L, column C: message". Callers may re-raise with a plain message
    (e.g. prefixed with the part name); line and column are then None.
    """

    def __init__(self, message: str, line: int | None = None, column: int | None = None,
                 part: str | None = None) -> None:
        self.message = message
        self.line = line
        self.column = column
        self.part = part
        text = message if line is None else f"line {line}, column {column}: {message}"
        super().__init__(text)


class RenderError(Exception):
    """A part could not be rendered (output too large, work budget spent, bad syntax)."""
