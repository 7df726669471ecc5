"""What the check page shows of a file: its header and first rows, and every row a problem
names (up to a cap), each cell cut to a length a table can show. Kept with a refused list's
problems, since the file itself is removed when its check ends."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.lists.reading import Sheet

FIRST_ROWS = 20  # the file's first rows, shown whether or not they are bad
BAD_ROWS = 50  # rows after those, shown because a problem names them
CELL_CHARS = 100  # a cell's text shown, cut after this many characters


def cut(value: str) -> str:
    """A cell as the table shows it."""
    return value if len(value) <= CELL_CHARS else value[:CELL_CHARS] + "…"


def table(sheet: Sheet, bad: Iterable[int | None]) -> dict[str, Any]:
    """``{"header": [...], "rows": [[number, [cells]], ...], "more": rows not shown}``: the
    first FIRST_ROWS rows, then the rows in ``bad`` (row numbers) up to BAD_ROWS more."""
    named = {number for number in bad if number is not None}
    width = len(sheet.header)
    shown: list[list[Any]] = []
    extra = 0
    for index, (number, cells) in enumerate(sheet.rows):
        if index >= FIRST_ROWS:
            if number not in named or extra >= BAD_ROWS:
                continue
            extra += 1
        padded = cells[:width] + [""] * (width - len(cells))
        shown.append([number, [cut(c) for c in padded]])
    return {"header": [cut(h) for h in sheet.header], "rows": shown,
            "more": len(sheet.rows) - len(shown)}


def of_kept(columns: list[str], rows: list[list[Any]], row_count: int) -> dict[str, Any]:
    """The same table for a list that passed: its first rows as kept (the recipient, then
    each tag, then the time zone when the file had one)."""
    zoned = any(len(row) > 3 for row in rows[:FIRST_ROWS])
    header = [*columns, "time zone"] if zoned else list(columns)
    shown = [[number, [cut(str(c)) for c in [recipient, *values,
                                              *([rest[0] or ""] if zoned and rest else [])]]]
             for number, recipient, values, *rest in rows[:FIRST_ROWS]]
    return {"header": [cut(h) for h in header], "rows": shown,
            "more": row_count - len(shown)}
