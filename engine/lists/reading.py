"""A recipients file read into a header and numbered rows, as a person sees them in a
spreadsheet: the header is row 1, the first recipient row 2.

CSV in UTF-8 (a byte-order mark is allowed, as Excel's "CSV UTF-8" writes), or the first
sheet of an Excel (.xlsx) or OpenDocument (.ods) spreadsheet (engine/lists/spreadsheets.py),
with the same limits.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO

from engine.lists import spreadsheets
from engine.lists.errors import FileRefused

__all__ = ["MAX_FILE_BYTES", "MAX_ROWS", "FileRefused", "Sheet", "column_key", "read",
           "read_stream"]

MAX_ROWS = 50_000  # recipient rows per file (GOV.UK Notify's and GC Notify's limit)
MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_CELL_CHARS = 8192  # the API's longest tag value (engine/sending/validation.py)
_OLE = b"\xd0\xcf\x11\xe0"  # an old Excel (.xls) file's first bytes
_SEPARATORS = re.compile(r"[\s_-]+")


@dataclass
class Sheet:
    """The header's cells and each non-blank row with its number in the file."""

    header: list[str]
    rows: list[tuple[int, list[str]]] = field(default_factory=list)


def column_key(name: str) -> str:
    """A column's name as it is matched: case, spaces, underscores and hyphens aside
    (``Email_Address``, ``email-address`` and ``EMAIL ADDRESS`` are one column)."""
    return " ".join(_SEPARATORS.split(name.strip().lower())).strip()


def read(data: bytes, filename: str = "") -> Sheet:
    """The file's header and rows (``data``, its bytes); see ``read_stream``."""
    if len(data) > MAX_FILE_BYTES:
        raise FileRefused(f"The file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB.")
    return read_stream(io.BytesIO(data), filename)


def read_stream(binary: IO[bytes], filename: str = "") -> Sheet:
    """The file's header and rows, read as it streams (the file is never whole in memory,
    only its rows); FileRefused when it is not a list of at most MAX_ROWS rows. What the
    file is comes from its content; a name that says otherwise is refused. Blank rows are
    skipped (their numbers are not reused)."""
    found = spreadsheets.kind(binary)
    named = filename.lower().rsplit(".", 1)[-1] if "." in filename else ""
    if found is None and binary.read(8).startswith(_OLE):
        raise FileRefused("This is an old Excel (.xls) file: save it as .xlsx or CSV.")
    binary.seek(0)
    if named in ("xlsx", "ods", "csv") and (found or "csv") != named:
        raise FileRefused(f"The file is named .{named} but is "
                          f"{_KINDS[found or 'csv']}: save it again as what it says.")
    if found == "xlsx":
        return _sheet(_numbered(spreadsheets.xlsx_rows(binary)))
    if found == "ods":
        return _sheet(_numbered(spreadsheets.ods_rows(binary)))
    return _csv_sheet(binary)


_KINDS = {"xlsx": "an Excel workbook", "ods": "an OpenDocument spreadsheet",
          "csv": "not a spreadsheet (CSV or text)"}


def _numbered(rows: spreadsheets.Rows) -> Iterator[tuple[int, list[str]]]:
    number = 0
    for count, cells in rows:
        number += count
        if cells:
            yield number, cells


def _sheet(rows: Iterator[tuple[int, list[str]]]) -> Sheet:
    """The header (row 1) and the rows that are not blank, at most MAX_ROWS."""
    sheet: Sheet | None = None
    for number, cells in rows:
        if sheet is None:
            sheet = Sheet([c.strip() for c in cells] if number == 1 else [])
            if number != 1:
                break  # row 1 is blank: no header
            continue
        if not any(c.strip() for c in cells):
            continue
        if len(sheet.rows) == MAX_ROWS:
            raise FileRefused(f"The file has more than {MAX_ROWS:,} rows: split it into "
                              "files of at most that many.")
        sheet.rows.append((number, cells))
    if sheet is None or not any(sheet.header):
        raise FileRefused("The file is empty: its first row names the columns.")
    if not sheet.rows:
        raise FileRefused("The file has a header row but no recipients.")
    return sheet


def _csv_sheet(binary: IO[bytes]) -> Sheet:
    text = io.TextIOWrapper(binary, encoding="utf-8-sig", newline="")
    reader = csv.reader(_without_nul(text), strict=False)
    try:
        return _sheet(enumerate(reader, start=1))
    except csv.Error as err:
        raise FileRefused(f"The file is not a CSV file we can read (line {reader.line_num}: "
                          f"{err}).") from None
    except UnicodeDecodeError:
        raise FileRefused("The file is not UTF-8 text: save it as CSV (UTF-8).") from None
    finally:
        text.detach()


def _without_nul(lines: Iterator[str]) -> Iterator[str]:
    for line in lines:
        if "\x00" in line:
            raise FileRefused("The file is not a CSV file (it holds NUL characters).")
        yield line
