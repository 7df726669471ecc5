"""CSV cells a spreadsheet shows as text and never runs (OWASP's CSV injection rule).

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is run as a
formula by Excel, LibreOffice and Google Sheets, so it is written with a leading ``'``;
a cell that is wholly a number (``-12``, ``+15005550006``, ``3.5``) is left as it is, since
a spreadsheet reads it as that number. ``+1+1@example.com`` or ``-1+HYPERLINK(...)`` start
with a sign and a digit but are no number: quoted (they used to pass). One rule for every
CSV Herald writes, in Python and, for the reports export, in PostgreSQL's SQL.
"""

from __future__ import annotations

import re

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# The same two tests as POSIX regular expressions (PostgreSQL's ``~``), for the SQL that
# writes a report's cells. Tab and carriage return are written as themselves.
PG_FORMULA_START = "'^[-=+@\t\r]'"
PG_NUMBER = "'^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]+)?$'"


def inert(cell: str) -> str:
    """``cell`` as a spreadsheet must show it: with a leading ``'`` when it would run."""
    if cell.startswith(FORMULA_START) and not _NUMBER.fullmatch(cell):
        return "'" + cell
    return cell


def pg_inert(expression: str) -> str:
    """``inert`` in SQL over a text ``expression`` (PostgreSQL)."""
    return (f"CASE WHEN {expression} ~ {PG_FORMULA_START} AND NOT {expression} ~ {PG_NUMBER} "
            f"THEN '''' || {expression} ELSE {expression} END")


def uninert(cell: str) -> str:
    """A cell read back from a file Herald wrote: without the ``'`` that ``inert`` added."""
    return cell[1:] if cell.startswith("'") and cell[1:2] in FORMULA_START else cell
