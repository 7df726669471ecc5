"""The reports bench (bench/reports.py) at another size and over monthly partitions:
10,000,000 notifications by default, or HERALD_BENCH_REPORT_ROWS (1000000 for the 1M
figures). The same seed, requests and export over the same 60 days, so its figures stand
beside bench/reports.py's: ``reports_page_p50_10m``, ``reports_export_10m`` and the rest,
named for the size.

On PostgreSQL the notification and attempt tables are partitioned by month
(docs/operations.md, "Partitions by month"). A database upgraded today keeps its past rows
in one first partition; this bench seeds as a database partitioned months ago holds them,
one partition a month (the 60 days span three), by making those months before the seed.

Run alone, it is not in the default set (at 10M the seed and the first rollup take many
minutes): ``python -m bench reports_scale``.
"""

from __future__ import annotations

import datetime as dt
import os

from bench import reports

ROWS = int(os.environ.get("HERALD_BENCH_REPORT_ROWS", "10000000"))


def _suffix(rows: int) -> str:
    return f"{rows // 1_000_000}m" if rows % 1_000_000 == 0 else f"{rows}"


def _monthly() -> None:
    """The empty tables' first partition (everything before the upgrade) replaced by one
    partition a month from before the seed's first day on."""
    from engine.database import partitions
    from engine.database.db import database

    db = database.obj
    start = partitions.utcnow() - dt.timedelta(days=reports.DAYS + 31)
    for table in partitions.TABLES:
        for name, low, high in partitions.partitions(db, table):
            if low is None and high is not None:
                db.execute_sql(f'DROP TABLE "{name}"')
        partitions.ensure_months(db, table, now=start, ahead=6)
    print("reports: monthly partitions:",
          ", ".join(name for name, _, _ in partitions.partitions(db, "notification")))


def run() -> list[dict]:
    from engine.database import partitions

    saved = reports.NOTIFICATIONS, reports.EXPORTS, reports._seed, reports._without_indexes
    seed, without_indexes = reports._seed, reports._without_indexes

    def seed_monthly():  # type: ignore[no-untyped-def]
        _monthly()
        return seed()

    def every_partition(db, tables):  # type: ignore[no-untyped-def]
        parts = [name for table in tables for name, _, _ in partitions.partitions(db, table)]
        return without_indexes(db, [*tables, *parts])

    reports.NOTIFICATIONS = ROWS
    reports.EXPORTS = 1 if ROWS > 2_000_000 else reports.EXPORTS  # 5M rows an export
    reports._seed, reports._without_indexes = seed_monthly, every_partition
    try:
        figures = reports.run()
    finally:
        (reports.NOTIFICATIONS, reports.EXPORTS, reports._seed,
         reports._without_indexes) = saved
    suffix = _suffix(ROWS)
    return [{**row, "name": f"{row['name']}_{suffix}",
             "unit": row["unit"].replace("1M notifications", f"{ROWS:,} notifications")}
            for row in figures]
