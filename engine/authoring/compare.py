"""Two versions side by side, field by field, line by line (difflib on the server)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from engine.provisioning.document import version_fields

from .publishing import label

# Lines compared in full; past this, a field is reported changed without its lines (a
# quadratic worst case on two megabytes of text is not worth a page).
MAX_LINES = 20_000
# A changed line pair longer than this is marked whole, not word by word.
MAX_WORD_DIFF_CHARS = 4_000
_WORDS = re.compile(r"\s+|\w+|[^\w\s]")
Words = list[tuple[bool, str]]  # (changed, text) pieces of a line, in order


@dataclass(frozen=True)
class Row:
    """One line pair: ``kind`` is equal, replace, delete (left only) or insert (right only)."""

    kind: str
    left_number: int | None
    left: str | None
    right_number: int | None
    right: str | None
    # A replaced line's words: what changed within it, each side (empty: mark the line).
    left_words: Words = field(default_factory=list)
    right_words: Words = field(default_factory=list)


@dataclass(frozen=True)
class FieldDiff:
    name: str
    label: str
    same: bool
    rows: list[Row]
    too_long: bool = False


def _lines(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, bool):
        return ["on" if value else "off"]
    return str(value).split("\n")


def _rows(left: list[str], right: list[str]) -> list[Row]:
    rows: list[Row] = []
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            rows += [Row("equal", i + 1, left[i], j + 1, right[j])
                     for i, j in zip(range(i1, i2), range(j1, j2), strict=True)]
            continue
        count = max(i2 - i1, j2 - j1)
        for k in range(count):
            i, j = i1 + k, j1 + k
            has_left, has_right = i < i2, j < j2
            kind = "replace" if has_left and has_right else "delete" if has_left else "insert"
            words = word_changes(left[i], right[j]) if kind == "replace" else ([], [])
            rows.append(Row(kind, i + 1 if has_left else None, left[i] if has_left else None,
                            j + 1 if has_right else None, right[j] if has_right else None,
                            *words))
    return rows


def word_changes(left: str, right: str) -> tuple[Words, Words]:
    """The words (and spaces and marks) of a replaced line pair, each marked changed or
    not, so the page can show what changed within a line; empty for very long lines."""
    if len(left) + len(right) > MAX_WORD_DIFF_CHARS:
        return [], []
    a, b = _WORDS.findall(left), _WORDS.findall(right)
    out_left: Words = []
    out_right: Words = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        same = tag == "equal"
        if i2 > i1:
            out_left.append((not same, "".join(a[i1:i2])))
        if j2 > j1:
            out_right.append((not same, "".join(b[j1:j2])))
    return out_left, out_right


def compare(channel: str, left: dict[str, Any], right: dict[str, Any]) -> list[FieldDiff]:
    """Each field of the channel, then `inlineCss` and each language variant's parts
    (``Body (fr)``) where either version has them, with their line rows; unchanged fields
    are marked ``same``."""
    left, right = _flat(channel, left), _flat(channel, right)
    extra = [name for name in ("inlineCss",) if name in left or name in right]
    extra += sorted({n for n in (*left, *right) if "/" in n})
    return compare_fields((*version_fields(channel), *extra), left, right)


def _flat(channel: str, content: dict[str, Any]) -> dict[str, Any]:
    """The content with each variant's parts as fields of their own (``fr/body``)."""
    from engine.catalog.parts import all_parts

    return {**content, **{k: v for k, v in all_parts(channel, content).items() if "/" in k}}


def compare_fields(names: tuple[str, ...], left: dict[str, Any],
                   right: dict[str, Any]) -> list[FieldDiff]:
    """Each of ``names`` (a partial has only its body), with its line rows."""
    out = []
    for name in names:
        a, b = _lines(left.get(name)), _lines(right.get(name))
        same = left.get(name) == right.get(name)
        if same:
            rows = [Row("equal", n, line, n, line) for n, line in enumerate(a, start=1)]
            out.append(FieldDiff(name, label(name), True, rows))
        elif len(a) > MAX_LINES or len(b) > MAX_LINES:
            out.append(FieldDiff(name, label(name), False, [], too_long=True))
        else:
            out.append(FieldDiff(name, label(name), False, _rows(a, b)))
    return out
