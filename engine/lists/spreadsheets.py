"""The first sheet of an Excel workbook (``.xlsx``) or an OpenDocument spreadsheet
(``.ods``) as rows of text, as a CSV file of the same sheet would read: a formula is its
cached value (what the program last showed), a whole number has no ``.0`` (a phone number
typed as a number stays ``447700900123``), a date is ``YYYY-MM-DD`` and a blank cell is
empty.

``.xlsx`` is read by openpyxl (read-only, row by row, with defusedxml against XML attacks);
``.ods`` by streaming its ``content.xml`` with lxml (entities never resolved, nothing
fetched), since no maintained ODS reader streams: odfpy builds the whole document in
memory. Either file is a zip: its unpacked size and entry count are checked first, so a
zip bomb is refused before a byte is parsed.
"""

from __future__ import annotations

import datetime as dt
import zipfile
from collections.abc import Iterator
from types import ModuleType
from typing import IO, Any

from engine.lists.errors import FileRefused

MAX_UNPACKED = 200 * 1024 * 1024  # every entry of the zip, unpacked
MAX_ENTRIES = 10_000
MAX_REPEAT = 1_000  # a cell repeated further is trailing emptiness (ODS pads to 1024 columns)
MAX_SAME_ROWS = 50_001  # a row repeated more than a list may hold is refused by the count
ODS_TYPE = b"application/vnd.oasis.opendocument.spreadsheet"
_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
# Rows: (how many rows this is, its cells); a run of blank rows is one entry.
Rows = Iterator[tuple[int, list[str]]]


def kind(binary: IO[bytes]) -> str | None:
    """``xlsx`` or ``ods`` when the file is that spreadsheet (by its content, never its
    name), None when it is no zip at all; FileRefused for a zip that is neither."""
    if binary.read(4) != b"PK\x03\x04":
        binary.seek(0)
        return None
    binary.seek(0)
    try:
        archive = zipfile.ZipFile(binary)
        entries = archive.infolist()
    except (zipfile.BadZipFile, OSError):
        raise FileRefused("The file is a damaged zip archive, not a spreadsheet we can "
                          "read.") from None
    if len(entries) > MAX_ENTRIES or sum(e.file_size for e in entries) > MAX_UNPACKED:
        raise FileRefused("The spreadsheet unpacks to more than "
                          f"{MAX_UNPACKED // (1024 * 1024)} MB: save it as CSV.")
    names = {e.filename for e in entries}
    found = None
    if "xl/workbook.xml" in names:
        found = "xlsx"
    elif "mimetype" in names and archive.read("mimetype").strip() == ODS_TYPE:
        found = "ods"
    binary.seek(0)
    if found is None:
        raise FileRefused("The file is a zip archive but not an Excel (.xlsx) or "
                          "OpenDocument (.ods) spreadsheet.")
    return found


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return str(value)


def xlsx_rows(binary: IO[bytes]) -> Rows:
    """The first worksheet's rows (cached values of formulas)."""
    import openpyxl  # imported when a workbook comes: most lists are CSV

    try:
        book = openpyxl.load_workbook(binary, read_only=True, data_only=True)
    except Exception:
        raise FileRefused("The file is not an Excel workbook we can read: save it as "
                          ".xlsx or CSV again.") from None
    try:
        if not book.worksheets:
            raise FileRefused("The workbook has no worksheet.")
        sheet = book.worksheets[0]
        expected = 1
        for row in sheet.iter_rows():
            number = next((c.row for c in row if getattr(c, "row", None)), None)
            if number is None:
                continue  # a row with no cell at all: blank
            if number > expected:
                yield number - expected, []
            yield 1, [_text(c.value) for c in row]
            expected = number + 1
    finally:
        book.close()


_etree: ModuleType | None = None


def _lxml() -> ModuleType:
    """lxml.etree, imported when an OpenDocument list comes (about 5 MiB of a process's
    memory otherwise held from start; docs/performance.md, "Memory at rest")."""
    global _etree
    if _etree is None:
        from lxml import etree

        _etree = etree
    return _etree


def _paragraph(node: Any) -> str:
    """A text element's text: spaces (``text:s``), tabs and line breaks as typed."""
    etree = _lxml()
    out = [node.text or ""]
    for child in node:
        name = etree.QName(child).localname
        if name == "s":
            out.append(" " * int(child.get(f"{{{_TEXT}}}c", "1")))
        elif name == "tab":
            out.append("\t")
        elif name == "line-break":
            out.append("\n")
        else:
            out.append(_paragraph(child))
        out.append(child.tail or "")
    return "".join(out)


def _ods_cell(cell: Any) -> str:
    """A cell's value: the typed value where the cell has one, else its text."""
    kind_ = cell.get(f"{{{_OFFICE}}}value-type")
    if kind_ in ("float", "percentage", "currency"):
        return _text(float(cell.get(f"{{{_OFFICE}}}value", "0")))
    if kind_ == "date":
        return cell.get(f"{{{_OFFICE}}}date-value", "").removesuffix("T00:00:00")
    if kind_ == "boolean":
        return "TRUE" if cell.get(f"{{{_OFFICE}}}boolean-value") == "true" else "FALSE"
    return "\n".join(_paragraph(p) for p in cell.iter(f"{{{_TEXT}}}p"))


def ods_rows(binary: IO[bytes]) -> Rows:
    """The first table's rows, streamed from content.xml."""
    try:
        with zipfile.ZipFile(binary) as archive, archive.open("content.xml") as content:
            yield from _table_rows(content)
    except KeyError:
        raise FileRefused("The OpenDocument file has no content.") from None


def _table_rows(content: IO[bytes]) -> Rows:
    etree = _lxml()
    events = etree.iterparse(content, events=("end",), tag=(f"{{{_TABLE}}}table-row",
                                                            f"{{{_TABLE}}}table"),
                             resolve_entities=False, no_network=True, huge_tree=False)
    try:
        for _, element in events:
            if element.tag == f"{{{_TABLE}}}table":
                return  # the first table only
            repeat = int(element.get(f"{{{_TABLE}}}number-rows-repeated", "1"))
            cells: list[str] = []
            for cell in element:
                if not cell.tag.endswith("table-cell"):
                    continue
                times = int(cell.get(f"{{{_TABLE}}}number-columns-repeated", "1"))
                value = _ods_cell(cell)
                if value or times <= MAX_REPEAT:  # past that: the sheet's padding
                    cells.extend([value] * min(times, MAX_REPEAT))
            element.clear()
            if any(cells):
                for _ in range(min(repeat, MAX_SAME_ROWS)):
                    yield 1, cells
            else:
                yield repeat, []
    except (etree.XMLSyntaxError, ValueError):
        raise FileRefused("The OpenDocument file's content is not well-formed: save it "
                          "again or as CSV.") from None
