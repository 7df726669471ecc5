"""Group commit: the rows of concurrent requests in one statement and one commit.

Every accepted send must be durable before its 202, so each used to pay a commit (a WAL
flush on PostgreSQL) of its own. Here the first request thread to arrive writes every row
waiting at that moment, its own included, and wakes their threads; a thread that arrives
while a write is in progress waits, and one of those waiting writes the next group. There
is no timer: alone, a request writes its row at once, as before; under load one commit
serves as many requests as were waiting, and each is answered only once its row is
committed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


class GroupWriteError(Exception):
    """The group this row was written with failed; the cause is chained."""


@dataclass
class _Row:
    params: tuple[Any, ...]
    done: bool = False
    error: BaseException | None = None


class GroupWriter:
    """Calls ``write(rows)`` for groups of rows offered by concurrent threads."""

    def __init__(self, write: Callable[[Sequence[tuple[Any, ...]]], None],
                 max_rows: int = 64) -> None:
        self._write = write
        self._max_rows = max_rows
        self._cond = threading.Condition()
        self._waiting: list[_Row] = []
        self._writing = False

    def add(self, params: tuple[Any, ...]) -> None:
        """Return once ``params`` is written; raise GroupWriteError if its group failed."""
        row = _Row(params)
        with self._cond:
            self._waiting.append(row)
            while self._writing and not row.done:
                self._cond.wait()
            if not row.done:
                self._writing = True
                group = self._waiting[:self._max_rows]
                del self._waiting[:self._max_rows]
        if not row.done:
            errors = self._write_group(group)
            with self._cond:
                for item, error in zip(group, errors, strict=True):
                    item.done, item.error = True, error
                self._writing = False
                self._cond.notify_all()
        if row.error is not None:
            raise GroupWriteError("the row could not be written") from row.error

    def _write_group(self, group: list[_Row]) -> list[BaseException | None]:
        """Each row's error; a failed group is written again row by row, so that one bad
        row (a workspace deleted meanwhile) fails only its own request."""
        try:
            self._write([item.params for item in group])
            return [None] * len(group)
        except BaseException as exc:  # every waiting request must hear of it
            if len(group) == 1:
                return [exc]
        errors: list[BaseException | None] = []
        for item in group:
            try:
                self._write([item.params])
                errors.append(None)
            except BaseException as exc:
                errors.append(exc)
        return errors
