"""CSV in and out of the suppression list, with spreadsheet formulas kept inert."""

from __future__ import annotations

import codecs
import csv
import io
from collections.abc import Iterable, Iterator
from typing import IO

from engine.people import users
from engine.people.errors import PeopleError

MAX_ROWS = 100_000
HEADERS = {"address", "email", "email address", "emailaddress", "recipient"}
# A cell a spreadsheet would run as a formula; written with a leading ' and read back without.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class CsvRefused(ValueError):
    """The file cannot be imported; the message says what to fix (and on which line)."""


def read_addresses(stream: IO[bytes]) -> list[str]:
    """Every address of the file's first column (or its address column), all checked: one
    bad line refuses the whole file, so that an import is never half done."""
    try:
        text = codecs.getreader("utf-8-sig")(stream).read()
    except UnicodeDecodeError:
        raise CsvRefused("The file is not UTF-8 text: save it as CSV (UTF-8).") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    column, addresses, problems = 0, [], []
    try:
        for number, row in enumerate(reader, start=1):
            cells = [c.strip() for c in row]
            if not any(cells):
                continue
            if number == 1 and any(c.lower() in HEADERS for c in cells):
                column = next(i for i, c in enumerate(cells) if c.lower() in HEADERS)
                continue
            if len(addresses) >= MAX_ROWS:
                raise CsvRefused(f"The file has more than {MAX_ROWS:,} addresses: split it.")
            cell = cells[column] if column < len(cells) else ""
            if cell.startswith("'") and cell[1:2] in FORMULA_START:
                cell = cell[1:]
            try:
                addresses.append(users.normalize_email(cell))
            except PeopleError:
                problems.append(number)
    except csv.Error as err:
        raise CsvRefused(f"The file is not valid CSV: {err}.") from None
    if problems:
        shown = ", ".join(str(n) for n in problems[:5]) + (" …" if len(problems) > 5 else "")
        raise CsvRefused(f"Not an email address on line {shown}: nothing was imported.")
    if not addresses:
        raise CsvRefused("The file holds no address.")
    return addresses


def _inert(cell: str) -> str:
    return "'" + cell if cell.startswith(FORMULA_START) else cell


def write_rows(header: Iterable[str], rows: Iterable[Iterable[str]]) -> Iterator[str]:
    """The CSV text, streamed a row at a time."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(list(header))
    yield out.getvalue()
    for row in rows:
        out.seek(0)
        out.truncate()
        writer.writerow([_inert(str(c)) for c in row])
        yield out.getvalue()
