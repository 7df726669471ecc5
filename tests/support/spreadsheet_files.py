"""Real .xlsx and .ods files for the list tests: an Excel workbook written by openpyxl with
a formula and its cached value (as Excel saves one), and an OpenDocument spreadsheet laid
out as LibreOffice writes it (repeated cells and rows, typed values, padding columns)."""

from __future__ import annotations

import io
import zipfile
from xml.sax.saxutils import escape

import openpyxl

ODS_MIME = "application/vnd.oasis.opendocument.spreadsheet"


def xlsx(rows: list[list[object]], formulas: dict[str, tuple[str, object]] | None = None
         ) -> bytes:
    """A workbook whose first sheet holds ``rows``; ``formulas`` {cell: (formula, cached
    value)} puts a formula with the value Excel would have saved beside it."""
    book = openpyxl.Workbook()
    sheet = book.active
    for row in rows:
        sheet.append(row)
    for cell, (formula, _) in (formulas or {}).items():
        sheet[cell] = "=" + formula
    other = book.create_sheet("Second")
    other.append(["not", "read"])
    out = io.BytesIO()
    book.save(out)
    data = out.getvalue()
    for cell, (formula, cached) in (formulas or {}).items():
        data = _with_cached_formula(data, cell, formula, cached)
    return data


def _with_cached_formula(data: bytes, cell: str, formula: str, cached: object) -> bytes:
    """openpyxl writes a formula without its value: add the value, as Excel saves it."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            body = source.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                text = body.decode()
                start = text.index(f'<c r="{cell}"')
                end = text.index("</c>", start) + 4
                kind = ' t="str"' if isinstance(cached, str) else ""
                text = (text[:start] + f'<c r="{cell}"{kind}><f>{escape(formula)}</f>'
                        f"<v>{escape(str(cached))}</v></c>" + text[end:])
                body = text.encode()
            target.writestr(item, body)
    return out.getvalue()


def _ods_cell(value: object) -> str:
    if isinstance(value, float | int) and not isinstance(value, bool):
        return (f'<table:table-cell office:value-type="float" office:value="{value}">'
                f"<text:p>{value}</text:p></table:table-cell>")
    if isinstance(value, tuple):  # (formula, cached value): LibreOffice keeps both
        formula, cached = value
        quoted = {'"': "&quot;"}
        return (f'<table:table-cell table:formula="of:{escape(formula, quoted)}" '
                f'office:value-type="string" office:string-value="{escape(cached, quoted)}">'
                f"<text:p>{escape(cached)}</text:p></table:table-cell>")
    return (f'<table:table-cell office:value-type="string"><text:p>{escape(str(value))}'
            "</text:p></table:table-cell>")


def ods(rows: list[list[object]]) -> bytes:
    """An .ods whose first table holds ``rows`` (then blank padding), and a second table."""
    body = "".join(
        "<table:table-row>" + "".join(_ods_cell(v) for v in row)
        + '<table:table-cell table:number-columns-repeated="1020"/></table:table-row>'
        for row in rows)
    content = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<office:document-content '
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3">'
        "<office:body><office:spreadsheet>"
        f'<table:table table:name="Sheet1">{body}'
        '<table:table-row table:number-rows-repeated="1048570">'
        '<table:table-cell table:number-columns-repeated="1024"/></table:table-row>'
        "</table:table>"
        '<table:table table:name="Second"><table:table-row>'
        "<table:table-cell><text:p>not read</text:p></table:table-cell></table:table-row>"
        "</table:table></office:spreadsheet></office:body></office:document-content>")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("mimetype", ODS_MIME, compress_type=zipfile.ZIP_STORED)
        archive.writestr("content.xml", content, compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr("META-INF/manifest.xml", "<manifest/>")
    return out.getvalue()
