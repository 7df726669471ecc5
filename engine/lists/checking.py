"""A recipients file checked against a template before anything is sent: every bad row
named as ``row N`` with what is wrong, and what is wrong with the file as a whole.

A row is checked by the API's own field rules (engine/sending/validation.py: the address or
number, each tag's length), so what the check passes a send accepts; suppressed recipients
are refused here too, since a list is sent by a person who can fix the file. The first row
is also resolved, rendered and built as a send would be, which catches what holds for every
row alike (an unverified sender, a channel that is off, a template that does not render).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from engine.catalog import snapshots
from engine.database.models import Suppression, Template, TemplateVersion, Workspace
from engine.database.vocabulary import stops
from engine.errors import ApiError
from engine.formats.addresses import suppression_key
from engine.lists import excerpt, rows, zones
from engine.lists.reading import Sheet, column_key
from engine.plugins.channel_contract import goes_bulk
from engine.plugins.manager import default_registry
from engine.rendering import variable_metadata
from engine.sending import allowance
from engine.sending.payload import payload, render_parts
from engine.sending.validation import MAX_TAG_KEY, MAX_TAGS

MAX_PROBLEMS_SHOWN = 100
QUOTED_CHARS = 40  # a refused value is quoted in its message up to this many characters
ZONE_COLUMN = "time zone"  # optional: each row's IANA time zone (a schedule's local time)
_SUPPRESSION_BATCH = 500
_TAG_PATH = re.compile(r"^tags\[(\d+)\]")


@dataclass
class Problem:
    """What is wrong: with a row (``row`` its number in the file) or the file (None)."""

    row: int | None
    message: str
    column: int | None = None  # the cell's column in the file (0-based), when one cell is

    def __str__(self) -> str:
        return f"row {self.row}: {self.message}" if self.row is not None else self.message


@dataclass
class Checked:
    """The check's verdict: the rows to send ([row number, recipient, tag values]) when
    there is no problem at all."""

    channel: str
    recipient_column: str
    tags: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    bad_rows: int = 0
    version: TemplateVersion | None = None
    zone_column: int | None = None  # the optional ``time zone`` column's index
    recipient_index: int | None = None  # the recipient column's index
    table: dict[str, Any] | None = None  # the file's first and bad rows (engine/lists/excerpt.py)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def count(self) -> int:
        return len(self.rows)

    def first_tags(self) -> dict[str, str]:
        return dict(zip(self.tags, self.rows[0][2], strict=True)) if self.rows else {}

    def add(self, problem: Problem) -> None:
        if problem.row is not None:
            self.bad_rows += 1
        if len(self.problems) < MAX_PROBLEMS_SHOWN:
            self.problems.append(problem)


def quoted(value: str) -> str:
    """A refused value as its message quotes it: in quotes, cut at QUOTED_CHARS."""
    value = value.strip()
    cut = value[:QUOTED_CHARS] + ("…" if len(value) > QUOTED_CHARS else "")
    return f"“{cut}”"


def normalise_recipient(channel: str, value: str) -> str:
    """A cell's recipient as the API is given it, as its channel normalises one (spaces
    around it trimmed; a phone number's spaces, dots, hyphens and brackets dropped, as
    people type them); the API's rules then judge it."""
    return default_registry().channel(channel).normalise_recipient(value)


def _columns(checked: Checked, sheet: Sheet) -> list[int] | None:
    """Index of the recipient column, then of each tag column; None when the file's
    columns are wrong (each reason added)."""
    wanted = checked.recipient_column
    seen: dict[str, int] = {}
    recipient, tag_indexes = None, []
    for index, name in enumerate(sheet.header):
        key = column_key(name)
        if not key:
            if any(index < len(cells) and cells[index].strip() for _, cells in sheet.rows):
                checked.add(Problem(None, f"Column {index + 1} has values but no name in "
                                          "row 1."))
            continue
        if key in seen:
            checked.add(Problem(None, f"Two columns are named {name!r}."))
            continue
        seen[key] = index
        if key == wanted:
            recipient = index
        elif key == ZONE_COLUMN:
            checked.zone_column = index
        elif len(name) > MAX_TAG_KEY:
            checked.add(Problem(None, f"The column name {name[:40]!r}... is longer than "
                                      f"{MAX_TAG_KEY} characters."))
        else:
            tag_indexes.append(index)
            checked.tags.append(name)
    if recipient is None:
        checked.add(Problem(None, f"The file needs a column named {wanted!r}: row 1 names "
                                  "the columns."))
    if len(tag_indexes) > MAX_TAGS:
        checked.add(Problem(None, f"The file has {len(tag_indexes)} tag columns; at most "
                                  f"{MAX_TAGS}."))
    if checked.problems:
        return None
    assert recipient is not None
    checked.recipient_index = recipient
    return [recipient, *tag_indexes]


def _needed_tags(checked: Checked, version: TemplateVersion) -> None:
    """Every tag the template uses must be a column (matched case-insensitively)."""
    channel = default_registry().channel(checked.channel)
    content = version.content or {}
    texts = [content.get(part) or "" for part, _ in channel.template_parts(content)]
    missing = variable_metadata(texts, {t: "" for t in checked.tags})["missingVariables"]
    for name in missing:
        checked.add(Problem(None, f"The template uses the tag {name!r}: the file needs a "
                                  f"column named {name!r}."))


def _row_message(checked: Checked, path: str, messages: list[str],
                 cells: list[str]) -> tuple[str, int | None]:
    """An API field error in the file's terms: the column it came from, quoting the value
    it refused; (message, the position in ``cells`` of that value, None when no cell)."""
    text = "; ".join(messages)
    if (found := _TAG_PATH.match(path)) is not None:
        index = int(found.group(1))
        if index >= len(checked.tags):
            return f"a tag: {text}", None
        column, value = checked.tags[index], quoted(cells[index + 1])
        if path.endswith(".value") and "at most" in text:
            return f"the {column!r} cell is too long ({text}): {value}", index + 1
        return f"{column!r}: {text}: {value}", index + 1
    if "verrideRecipients" in path:
        return f"{checked.recipient_column} {text}: {quoted(cells[0])}", 0
    return f"{path}: {text}", None


def _check_rows(checked: Checked, sheet: Sheet, indexes: list[int], workspace: Workspace,
                template: Template, version: TemplateVersion) -> None:
    width = len(sheet.header)
    ws_id, t_id = str(workspace.id), str(template.id)
    for number, cells in sheet.rows:
        if len(cells) > width and any(c.strip() for c in cells[width:]):
            checked.add(Problem(number, f"it has {len(cells)} cells; row 1 names {width} "
                                        "columns"))
            continue
        cells = cells + [""] * (width - len(cells))
        recipient = normalise_recipient(checked.channel, cells[indexes[0]])
        if not recipient:
            checked.add(Problem(number, f"no {checked.recipient_column}", indexes[0]))
            continue
        values = [cells[i] for i in indexes[1:]]
        zone = None
        if checked.zone_column is not None:
            zone = cells[checked.zone_column].strip() or None
            if zone is not None and not zones.known(zone):
                checked.add(Problem(number, f"time zone {zone[:64]!r} is not a time zone "
                                            "name such as Europe/London or America/New_York",
                                    checked.zone_column))
                continue
        row = rows.RowRequest(ws_id, t_id, version.number, checked.channel, recipient,
                              dict(zip(checked.tags, values, strict=True)))
        try:
            row.check()  # the API's field rules, once: the send takes the row as it stands
        except ApiError as err:
            said = [_row_message(checked, path, messages, [cells[i] for i in indexes])
                    for path, messages in (err.errors or {}).items()]
            where = next((at for _, at in said if at is not None), None)
            checked.add(Problem(number, "; ".join(m for m, _ in said) or err.detail,
                                None if where is None else indexes[where]))
            continue
        checked.rows.append([number, recipient, values] if checked.zone_column is None
                            else [number, recipient, values, zone])


def _suppressed(checked: Checked, workspace: Workspace, marketing: bool,
                topic: str | None = None) -> None:
    """Rows whose recipient is on the workspace's suppression list (for this template's
    kind of message: a Marketing-only suppression stops Marketing email only)."""
    by_key: dict[str, list[int]] = {}
    for number, recipient, *_ in checked.rows:
        by_key.setdefault(suppression_key(recipient), []).append(number)
    keys = list(by_key)
    found: dict[int, str] = {}
    for start in range(0, len(keys), _SUPPRESSION_BATCH):
        for address, scope in (Suppression.select(Suppression.address, Suppression.scope)
                               .where(Suppression.workspace == workspace,
                                      Suppression.address.in_(
                                          keys[start:start + _SUPPRESSION_BATCH])).tuples()):
            if stops(scope, marketing, topic):
                for number in by_key.get(address, []):
                    found[number] = address
    for number in sorted(found):
        checked.add(Problem(number, f"{found[number]} is on the suppression list",
                            checked.recipient_index))


def _allowance(checked: Checked, workspace: Workspace) -> None:
    """The account's monthly allowance, for the whole list at once."""
    account = workspace.account
    if account.monthly_limit is None:
        checked.add(Problem(None, "The account has no monthly allowance configured: nothing "
                                  "can be sent."))
        return
    left = max(0, account.monthly_limit - allowance.used_this_month(str(account.id)))
    if checked.count > left:
        checked.add(Problem(None, f"The list has {checked.count:,} rows; the account's "
                                  f"monthly allowance has {left:,} notifications left."))


def _first_row(checked: Checked, snap: snapshots.TemplateSnapshot,
               version: TemplateVersion) -> None:
    """The first row resolved, rendered and built as a send would: what every row shares."""
    number, recipient, values, *_ = checked.rows[0]
    row = rows.RowRequest(str(snap.workspace.id), str(snap.template.id), version.number,
                          checked.channel, recipient, dict(zip(checked.tags, values,
                                                               strict=True)))
    try:
        resolved = row.resolved(snap, version)
        rendered, errors = render_parts(resolved)
        if errors:
            for e in errors:
                checked.add(Problem(number, f"the template's {e['templatePart']} does not "
                                            f"render: {e['message']}"))
            return
        payload(resolved, rendered)
    except ApiError as err:
        details = [m for messages in (err.errors or {}).values() for m in messages]
        checked.add(Problem(None, f"A send would be refused: {'; '.join(details) or err.detail}"))


def check(workspace: Workspace, template: Template, sheet: Sheet) -> Checked:
    """Every problem of ``sheet`` as a list for ``template``'s live version."""
    column = rows.recipient_column(template.channel)
    if column is None:
        raise ValueError(f"a {template.channel} template is not sent to a list")
    checked = Checked(template.channel, column)
    snap = snapshots.snapshot(str(workspace.id), str(template.id))
    version = snap.live if snap is not None else None
    if snap is None or version is None:
        checked.add(Problem(None, "The template has no published version: publish it first."))
        return checked
    checked.version = version
    indexes = _columns(checked, sheet)
    if indexes is None:
        return checked
    _needed_tags(checked, version)
    _check_rows(checked, sheet, indexes, workspace, template, version)
    marketing = goes_bulk(default_registry().channel(template.channel), version.content)
    _suppressed(checked, workspace, marketing,
                (version.content or {}).get("topic") if marketing else None)
    if checked.problems:
        checked.rows = []  # a file with any bad row sends nothing
        checked.problems.sort(key=lambda p: -1 if p.row is None else p.row)
        checked.table = excerpt.table(sheet, [p.row for p in checked.problems])
        return checked
    _allowance(checked, workspace)
    if not checked.problems:
        _first_row(checked, snap, version)
    if checked.problems:
        checked.rows = []
        checked.table = excerpt.table(sheet, [p.row for p in checked.problems])
    checked.problems.sort(key=lambda p: -1 if p.row is None else p.row)
    return checked
