"""engine/lists/spreadsheets.py through reading: the first sheet of an .xlsx or .ods reads
as the same CSV would (formulas as their cached values, whole numbers without .0), and a
file that is not what it says is refused with a clear error."""

from __future__ import annotations

import io
import zipfile

import pytest

from engine.lists import reading, spreadsheets, uploads
from tests import factories
from tests.support.spreadsheet_files import ods, xlsx

HEADER = ["email address", "name", "phone"]
ROWS = [["ada@example.net", "Ada", 447700900123], ["grace@example.net", "Grace  Hopper", 7]]
AS_CSV = "email address,name,phone\nada@example.net,Ada,447700900123\n" \
         "grace@example.net,Grace  Hopper,7\n"


def _sheet(data: bytes, name: str) -> reading.Sheet:
    return reading.read_stream(io.BytesIO(data), name)


def test_an_xlsx_and_an_ods_read_as_the_same_csv_would():
    expected = _sheet(AS_CSV.encode(), "people.csv")
    assert _sheet(xlsx([HEADER, *ROWS]), "people.xlsx") == expected
    assert _sheet(ods([HEADER, *ROWS]), "people.ods") == expected


def test_formulas_are_read_as_their_cached_values():
    book = xlsx([["email address", "name"], ["ada@example.net", None]],
                formulas={"B2": ('UPPER("ada")', "ADA")})
    assert _sheet(book, "f.xlsx").rows == [(2, ["ada@example.net", "ADA"])]
    sheet = ods([["email address", "name"], ["ada@example.net", ('UPPER("ada")', "ADA")]])
    assert _sheet(sheet, "f.ods").rows == [(2, ["ada@example.net", "ADA"])]


def test_blank_rows_keep_the_spreadsheets_row_numbers():
    book = xlsx([HEADER, ROWS[0], [], [], ROWS[1]])
    assert [n for n, _ in _sheet(book, "b.xlsx").rows] == [2, 5]
    sheet = ods([HEADER, ROWS[0], [""], [""], ROWS[1]])
    assert [n for n, _ in _sheet(sheet, "b.ods").rows] == [2, 5]


def test_a_file_that_is_not_what_it_says_is_refused():
    cases = [
        (AS_CSV.encode(), "people.xlsx", "named .xlsx but is not a spreadsheet"),
        (xlsx([HEADER]), "people.ods", "named .ods but is an Excel workbook"),
        (ods([HEADER]), "people.csv", "named .csv but is an OpenDocument spreadsheet"),
        (b"PK\x03\x04 not a zip at all", "people.xlsx", "damaged zip archive"),
    ]
    for data, name, message in cases:
        with pytest.raises(reading.FileRefused, match=message):
            _sheet(data, name)
    other = io.BytesIO()
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("word/document.xml", "<w/>")
    with pytest.raises(reading.FileRefused, match=r"not an Excel .* or OpenDocument"):
        _sheet(other.getvalue(), "people.xlsx")


def test_a_zip_bomb_is_refused_before_it_is_parsed(monkeypatch):
    monkeypatch.setattr(spreadsheets, "MAX_UNPACKED", 10_000)
    with pytest.raises(reading.FileRefused, match="unpacks to more than"):
        _sheet(ods([HEADER, *ROWS * 200]), "big.ods")


def test_a_spreadsheet_list_is_checked_and_kept_as_its_csv_would_be(settings):
    ws = factories.workspace()
    template = factories.template(ws)
    rows = [["email address", "name"], ["ada@example.net", "Ada"], ["grace@", "Grace"]]
    for data, name in ((xlsx(rows), "people.xlsx"), (ods(rows), "people.ods")):
        checked, kept = uploads.upload(ws, template, name, data, None)
        assert kept is None
        assert [str(p) for p in checked.problems] == [
            "row 3: email address is not a valid address: “grace@”"]
    checked, kept = uploads.upload(ws, template, "people.ods", ods(rows[:2]), None)
    assert kept.rows == [[2, "ada@example.net", ["Ada"]]] and kept.filename == "people.ods"
