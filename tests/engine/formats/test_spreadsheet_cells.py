"""One CSV injection rule for every export (OWASP): a cell that would run is quoted unless
it is wholly a number (issue 37, finding 4)."""

from __future__ import annotations

import csv
import io

import pytest

from engine.formats.spreadsheet_cells import inert, uninert
from web.settings.csv_files import read_rows, write_rows


@pytest.mark.parametrize("cell", ["=1+1", "+1+1@example.com", "-1+HYPERLINK(\"x\")", "@SUM(1)",
                                  "\tx", "\rx", "-", "+", "-x", "+1 2", "1e5+1"[3:] + "=x"])
def test_a_cell_that_would_run_is_quoted(cell):
    assert inert(cell) == "'" + cell
    assert uninert(inert(cell)) == cell


@pytest.mark.parametrize("cell", ["+14155550100", "-12", "3.5", "-.5", "1e5", "+1.5E-3",
                                  "ada@example.com", "", "'quoted"])
def test_a_number_or_plain_text_stays_as_it_is(cell):
    assert inert(cell) == cell


def test_the_suppressions_file_is_inert_and_reads_back():
    text = "".join(write_rows(["address", "scope"], [["+1+1@example.com", "all"],
                                                      ["ada@example.com", "marketing"]]))
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[1] == ["'+1+1@example.com", "all"]
    assert read_rows(io.BytesIO(text.encode())) == [("+1+1@example.com", "all"),
                                                    ("ada@example.com", "marketing")]
