"""CSV in and out of the suppression list, with spreadsheet formulas kept inert."""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Iterable, Iterator
from typing import IO

from engine.catalog.topics import name_problem
from engine.formats.spreadsheet_cells import inert, uninert
from engine.people import users
from engine.people.errors import PeopleError

MAX_ROWS = 100_000
HEADERS = {"address", "email", "email address", "emailaddress", "recipient"}
SCOPES = ("all", "marketing")  # the first is a row's scope where the file gives none


class CsvRefused(ValueError):
    """The file cannot be imported; the message says what to fix (and on which line)."""


def read_rows(stream: IO[bytes]) -> list[tuple[str, str]]:
    """Every address of the file's first column (or its address column), each with its scope
    (a ``scope`` column, as the export writes it; ``all`` where the file has none, so an
    older file still imports), all checked: one bad line refuses the whole file, so that an
    import is never half done."""
    try:
        text = codecs.getreader("utf-8-sig")(stream).read()
    except UnicodeDecodeError:
        raise CsvRefused("The file is not UTF-8 text: save it as CSV (UTF-8).") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    column, scope_column, rows, problems = 0, None, [], []
    try:
        for number, row in enumerate(reader, start=1):
            cells = [c.strip() for c in row]
            if not any(cells):
                continue
            if number == 1 and any(c.lower() in HEADERS for c in cells):
                column = next(i for i, c in enumerate(cells) if c.lower() in HEADERS)
                scope_column = next((i for i, c in enumerate(cells) if c.lower() == "scope"),
                                    None)
                continue
            if len(rows) >= MAX_ROWS:
                raise CsvRefused(f"The file has more than {MAX_ROWS:,} addresses: split it.")
            parsed = _row(cells, column, scope_column)
            if isinstance(parsed, str):
                problems.append(f"line {number}: {parsed}")
            else:
                rows.append(parsed)
    except csv.Error as err:
        raise CsvRefused(f"The file is not valid CSV: {err}.") from None
    if problems:
        more = f" (and {len(problems) - 3} more lines)" if len(problems) > 3 else ""
        raise CsvRefused("; ".join(problems[:3]) + more + ". Nothing was imported.")
    if not rows:
        raise CsvRefused("The file holds no address.")
    return rows


def _row(cells: list[str], column: int, scope_column: int | None) -> tuple[str, str] | str:
    """One line's address and scope, or what is wrong with it, naming the value (the line
    number alone sends a person hunting through the file)."""
    cell = cells[column] if column < len(cells) else ""
    cell = uninert(cell)
    scope = (cells[scope_column] if scope_column is not None and scope_column < len(cells)
             else "").strip() or SCOPES[0]
    if not scope.startswith("topic:"):  # a topic's name keeps its case
        scope = scope.lower()
    try:
        address = users.normalize_email(cell)
    except PeopleError:
        return f"“{_short(cell)}” is not an email address" if cell else "no email address"
    if scope not in SCOPES and not (scope.startswith("topic:")
                                    and name_problem(scope.removeprefix("topic:")) is None):
        return f"scope “{_short(scope)}” is not all, marketing or topic:NAME"
    return address, scope


def _short(value: str) -> str:
    return value if len(value) <= 60 else value[:57] + "..."


def write_rows(header: Iterable[str], rows: Iterable[Iterable[str]]) -> Iterator[str]:
    """The CSV text, streamed a row at a time."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(list(header))
    yield out.getvalue()
    for row in rows:
        out.seek(0)
        out.truncate()
        writer.writerow([inert(str(c)) for c in row])
        yield out.getvalue()
