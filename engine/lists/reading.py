"""A recipients file read into a header and numbered rows, as a person sees them in a
spreadsheet: the header is row 1, the first recipient row 2.

CSV only, UTF-8 (a byte-order mark is allowed, as Excel's "CSV UTF-8" writes). A
spreadsheet (.xlsx, .ods) is refused with a word on how to save it as CSV: reading one would
bring a dependency for what every spreadsheet program exports in two clicks.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO

MAX_ROWS = 50_000  # recipient rows per file (GOV.UK Notify's and GC Notify's limit)
MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_CELL_CHARS = 8192  # the API's longest tag value (engine/sending/validation.py)
_SPREADSHEET_MAGIC = (b"PK\x03\x04", b"\xd0\xcf\x11\xe0")  # zip (xlsx, ods), OLE (xls)
_SEPARATORS = re.compile(r"[\s_-]+")


class FileRefused(ValueError):
    """A file that cannot be read as a list at all; says why, for the person uploading."""


@dataclass
class Sheet:
    """The header's cells and each non-blank row with its number in the file."""

    header: list[str]
    rows: list[tuple[int, list[str]]] = field(default_factory=list)


def column_key(name: str) -> str:
    """A column's name as it is matched: case, spaces, underscores and hyphens aside
    (``Email_Address``, ``email-address`` and ``EMAIL ADDRESS`` are one column)."""
    return " ".join(_SEPARATORS.split(name.strip().lower())).strip()


def _refuse_spreadsheet(head: bytes, filename: str) -> None:
    if head.startswith(_SPREADSHEET_MAGIC) or filename.lower().endswith(
            (".xlsx", ".xls", ".ods", ".numbers")):
        raise FileRefused("This is a spreadsheet file: save it as CSV (UTF-8) and upload "
                          "that.")


def read(data: bytes, filename: str = "") -> Sheet:
    """The file's header and rows (``data``, its bytes); see ``read_stream``."""
    if len(data) > MAX_FILE_BYTES:
        raise FileRefused(f"The file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB.")
    return read_stream(io.BytesIO(data), filename)


def read_stream(binary: IO[bytes], filename: str = "") -> Sheet:
    """The file's header and rows, read as it streams (the file is never whole in memory,
    only its rows); FileRefused when it is not a CSV file of at most MAX_ROWS rows. Blank
    rows are skipped (their numbers are not reused)."""
    head = binary.read(8)
    binary.seek(0)
    _refuse_spreadsheet(head, filename)
    text = io.TextIOWrapper(binary, encoding="utf-8-sig", newline="")
    reader = csv.reader(_without_nul(text), strict=False)
    sheet: Sheet | None = None
    try:
        for number, cells in enumerate(reader, start=1):
            if sheet is None:
                sheet = Sheet([c.strip() for c in cells])
                continue
            if not any(c.strip() for c in cells):
                continue
            if len(sheet.rows) == MAX_ROWS:
                raise FileRefused(f"The file has more than {MAX_ROWS:,} rows: split it into "
                                  "files of at most that many.")
            sheet.rows.append((number, cells))
    except csv.Error as err:
        raise FileRefused(f"The file is not a CSV file we can read (line {reader.line_num}: "
                          f"{err}).") from None
    except UnicodeDecodeError:
        raise FileRefused("The file is not UTF-8 text: save it as CSV (UTF-8).") from None
    finally:
        text.detach()
    if sheet is None or not any(sheet.header):
        raise FileRefused("The file is empty: its first row names the columns.")
    if not sheet.rows:
        raise FileRefused("The file has a header row but no recipients.")
    return sheet


def _without_nul(lines: Iterator[str]) -> Iterator[str]:
    for line in lines:
        if "\x00" in line:
            raise FileRefused("The file is not a CSV file (it holds NUL characters).")
        yield line
