"""A peewee SELECT whose SQL text is built once per process and database, then run with each
call's values: the query every workspace page makes first (the session, its user, the
membership and the workspace) selects four tables' columns, and peewee spends more CPU
writing that SQL than the database spends answering it. On PostgreSQL it also runs as a
named server-side statement (engine/database/prepared.py): planning that four-table join took
the database more CPU than running it (docs/performance.md). Only the text and the plan
are kept, and peewee's reading of the result's columns (which column fills which model's
field, a tenth of a millisecond for four models): the rows are read afresh at every call,
so nothing read is ever reused."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from peewee import Field, ModelSelect

from engine.database import prepared
from engine.database.models import database


class PreparedSelect:
    """``build(*sentinels)`` makes the query; ``fields`` convert each call's values as the
    query's own comparisons would (their ``db_value``), in the order of its parameters."""

    def __init__(self, name: str, build: Callable[..., ModelSelect], fields: Sequence[Field],
                 sentinels: Sequence[Any]) -> None:
        self._name = name  # the server-side statement's name on PostgreSQL
        self._build, self._fields, self._sentinels = build, tuple(fields), tuple(sentinels)
        self._compiled: dict[tuple, tuple[ModelSelect, str] | None] = {}
        # Per dialect: what peewee's cursor wrapper works out from the query and the
        # result's columns before its first row, the same for every call of one SQL text.
        self._layouts: dict[tuple, dict[str, Any]] = {}

    @staticmethod
    def _dialect() -> tuple:
        # By dialect, not by object: an id() can come back for another database once the
        # first is gone, and the text depends only on how the dialect writes SQL.
        db = database.obj
        return type(db), db.param, db.quote

    def _compile(self, key: tuple | None = None) -> tuple[ModelSelect, str] | None:
        """(query, SQL) for the database in use (its ``_dialect()``), or None when its
        parameters are not the sentinels in order (then each call builds its query as
        usual)."""
        key = key or self._dialect()
        if key not in self._compiled:
            query = self._build(*self._sentinels)
            sql, params = query.sql()
            expected = [f.db_value(v) for f, v in zip(self._fields, self._sentinels, strict=True)]
            self._compiled[key] = (query, sql) if list(params) == expected else None
        return self._compiled[key]

    def tuples(self, *values: Any) -> list[tuple]:
        """Every row of the query for ``values``, its columns as the database driver reads
        them: for a query whose columns need no conversion (text, numbers)."""
        compiled = self._compile()
        if compiled is None:
            return list(self._build(*values).tuples())
        params = tuple(f.db_value(v) for f, v in zip(self._fields, values, strict=True))
        return list(prepared.execute(database.obj, self._name, compiled[1], params).fetchall())

    def first(self, *values: Any) -> Any:
        """The first row of the query for ``values``, or None."""
        dialect = self._dialect()
        compiled = self._compile(dialect)
        if compiled is None:
            return self._build(*values).first()
        query, sql = compiled
        params = tuple(f.db_value(v) for f, v in zip(self._fields, values, strict=True))
        cursor = prepared.execute(database.obj, self._name, sql, params)
        wrapper = query._get_cursor_wrapper(cursor)
        row = cursor.fetchone()
        if row is None:
            return None
        layout = self._layouts.get(dialect)
        if layout is None:
            # Whatever initialize() sets is the layout: kept as it is, read, never changed.
            before = dict(vars(wrapper))
            wrapper.initialize()
            layout = {k: v for k, v in vars(wrapper).items() if before.get(k, self) is not v}
            self._layouts[dialect] = layout
        else:
            vars(wrapper).update(layout)
        wrapper.initialized = True
        return wrapper.process_row(row)
