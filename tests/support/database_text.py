"""Every value of every table of the database under test as text: what a full scan of the
database (or a `pg_dump` of its rows) would show, for tests that check what is kept."""

from __future__ import annotations

from peewee import Database


def every_value(db: Database) -> str:
    """Each row of each table, one line each, sorted (two scans compare equal when no row
    changed); bytes decoded, so an address in a blob is found too."""
    lines = []
    for table in sorted(db.get_tables()):
        cursor = db.execute_sql(f'SELECT * FROM "{table}"')
        for row in cursor.fetchall():
            cells = [bytes(v).decode("utf-8", "replace") if isinstance(v, bytes | memoryview)
                     else str(v) for v in row]
            lines.append(f"{table}: " + " | ".join(cells))
    return "\n".join(sorted(lines))
