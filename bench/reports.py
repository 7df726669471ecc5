"""Reports on a workspace of 1,000,000 notifications and their events (PostgreSQL).

Seeded with generate_series in a few statements (about a minute), then the report job runs
once as a worker would (lookup index, daily rollups). Figures: the Reports page's two
requests, counts for 30 days with the first feed page (``reports_page_p50``) and the same
with one filter (``reports_page_filtered_p50``), a recipient search, and the CSV export's
rate over the 30 days (``reports_export``, rows/s).
"""

from __future__ import annotations

import inspect
import statistics
import time
import uuid
from pathlib import Path

from bench import seed_cache
from bench.common import BENCH_SECRET, bench_database_url, figure, median_pair, paired

NOTIFICATIONS = 1_000_000
DAYS = 60  # the page's 30 days hold about half of them
ROUNDS = 15
EXPORTS = 3  # export runs, each beside a floor run

# Indexes and foreign-key triggers are off while the rows go in (built once at the end, a
# few seconds, instead of maintained row by row); the bench's database is its own. The
# lookup index is seeded as the report job leaves it in a running deployment (it indexes
# each minute's sends); the first job then rolls up the 60 days.
_SEED = """
SET LOCAL session_replication_role = replica;
INSERT INTO notification (id, account_id, workspace_id, template_id, version_number, channel,
  status, is_test, correlation_id, delivery_id, payload, attempts, created_at, updated_at)
SELECT gen_random_uuid(), %(account)s, %(workspace)s, (%(templates)s::uuid[])[1 + i %% 4], 1,
  CASE WHEN i %% 4 = 3 THEN 'sms' ELSE 'email' END,
  CASE WHEN i <= 50 THEN 'queued' WHEN i %% 100 < 92 THEN 'delivered'
       WHEN i %% 100 < 96 THEN 'failed' ELSE 'suppressed' END,
  i %% 100 = 99, 'c' || i, 'd' || i,
  CASE WHEN i %% 4 = 3 THEN '{"channel":"sms","to":["+1415' || lpad(i::text, 7, '0')
    || '"],"text":"Your code is 123456","suppressionKeys":["+1415'
    || lpad(i::text, 7, '0') || '"]}'
  ELSE '{"channel":"email","to":["user' || (i %% 200000) || '@example.net"],"subject":"Hello",'
    || '"html":"<p>Hello</p>","suppressionKeys":["user' || (i %% 200000) || '@example.net"]}'
  END, 1, ts, ts
FROM (SELECT i, (now() AT TIME ZONE 'UTC') - (i * interval '%(days)s days' / %(count)s) AS ts
      FROM generate_series(1, %(count)s) AS i) AS s;
INSERT INTO delivery_attempt (notification_id, number, started_at, duration_ms, outcome,
  provider_message_id, provider)
SELECT id, 1, created_at, 120, CASE status WHEN 'delivered' THEN 'delivered'
  WHEN 'failed' THEN 'permanent' ELSE 'suppressed' END, 'pm-' || correlation_id, 'smtp'
  FROM notification WHERE status <> 'queued';
INSERT INTO tracking_event (notification_id, kind, url, created_at)
SELECT id, CASE WHEN r < 0.1 THEN 'click' ELSE 'open' END,
  CASE WHEN r < 0.1 THEN 'https://example.com/a' END, created_at + interval '1 hour'
  FROM (SELECT id, created_at, random() AS r FROM notification WHERE status = 'delivered') d
 WHERE r < 0.35;
INSERT INTO notification_event (workspace_id, notification_id, kind, recipient, source,
  detail, occurred_at)
SELECT workspace_id, id, CASE WHEN r < 0.001 THEN 'complained' ELSE 'bounced' END,
  'user@example.net', 'postmark', 'HardBounce', created_at + interval '5 minutes'
  FROM (SELECT workspace_id, id, created_at, random() AS r FROM notification
        WHERE status = 'delivered') d WHERE r < 0.012;
INSERT INTO notification_lookup (workspace_id, notification_id, kind, term, created_at)
SELECT workspace_id, id, 'c', correlation_id, created_at FROM notification
UNION ALL
SELECT workspace_id, id, 'r', payload::json -> 'suppressionKeys' ->> 0, created_at
  FROM notification;
INSERT INTO report_cursor (name, at) VALUES ('lookup', now() AT TIME ZONE 'UTC');
"""


def _without_indexes(db, tables: list[str]):
    """(drop statements, create statements) of the tables' indexes but primary keys."""
    rows = db.execute_sql(
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = ANY(%s) AND indexname "
        "NOT LIKE '%%_pkey'", (tables,)).fetchall()
    return [f'DROP INDEX "{name}"' for name, _ in rows], [definition for _, definition in rows]


def _seed() -> tuple[uuid.UUID, list[uuid.UUID], float]:
    from engine.database import secrets
    from engine.database.db import database
    from engine.database.models import Account, Project, Template, Workspace

    account = Account.create(name="bench", plan="business", monthly_limit=10**9)
    ws = Workspace.create(account=account, name="bench",
                          signing_secret=secrets.new_signing_secret())
    project = Project.create(workspace=ws, name="p")
    templates = [Template.create(workspace=ws, project=project, name=f"T{i}",
                                 channel="sms" if i == 3 else "email") for i in range(4)]
    started = time.perf_counter()
    db = database.obj
    drops, creates = _without_indexes(db, ["notification", "delivery_attempt", "tracking_event",
                                           "notification_event", "notification_lookup"])
    with database.atomic():
        for statement in drops:
            db.execute_sql(statement)
        db.execute_sql(_SEED, {
            "account": account.id.hex, "workspace": ws.id.hex,
            "templates": [t.id.hex for t in templates], "days": DAYS,
            "count": NOTIFICATIONS})
        for statement in creates:
            db.execute_sql(statement)
    db.execute_sql("ANALYZE")
    return ws.id, [t.id for t in templates], time.perf_counter() - started


_FLOOR = """SELECT correlation_id, id::text,
  to_char(created_at, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), template_id::text, version_number,
  channel, status FROM notification WHERE workspace_id = %s AND NOT is_test
  AND created_at >= %s AND created_at < %s ORDER BY created_at DESC, id DESC"""


def _floor_rate(f) -> float:
    """The floor of the export: the same rows read bare (no events, no recipients) through
    the same kind of cursor into the same csv writer."""
    import csv
    import io

    from engine.database.db import database
    from engine.reports import projection

    db = database.obj
    started, rows = time.perf_counter(), 0
    with projection.snapshot(work_mem_mb=128):
        cursor = db.connection().cursor(name=f"floor_{uuid.uuid4().hex}", withhold=True)
        cursor.itersize = 5000
        cursor.execute(_FLOOR, (f.workspace_id.hex, f.start_at, f.end_before))
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\r\n")
        while chunk := cursor.fetchmany(5000):
            rows += len(chunk)
            buffer.seek(0)
            buffer.truncate()
            writer.writerows(chunk)
        cursor.close()
    return rows / (time.perf_counter() - started)


def _timed(action) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def run() -> list[dict]:
    from config.settings import Settings
    from engine import runtime
    from engine.database.migrations import upgrade
    from engine.database.models.initial import ALL_MODELS
    from engine.database.models.reports import REPORT_MODELS
    from engine.reports import job
    from engine.reports.counts import counts
    from engine.reports.export import export_csv
    from engine.reports.feed import feed
    from engine.reports.filters import parse

    url = bench_database_url()
    if not url.startswith("postgres"):
        print("reports: PostgreSQL is not reachable; the reports figures need it")
        return []
    db = runtime.configure(Settings(env="test", database_url=url, secret_key=BENCH_SECRET))
    db.connect(reuse_if_open=True)
    # The bench's own database: whatever an earlier run left goes (HERALD_BENCH_DATABASE_URL
    # may name one that is not recreated).
    db.drop_tables([*ALL_MODELS, *REPORT_MODELS], safe=True, cascade=True)
    upgrade(db)
    db.close()

    def seed() -> dict:
        db.connect(reuse_if_open=True)
        workspace, templates, seeded = _seed()
        print(f"reports: seeded {NOTIFICATIONS:,} notifications and their events in "
              f"{seeded:.1f} s")
        started = time.perf_counter()
        while job.run_once()["rolled"]:  # each pass stops after about 30 s
            pass
        rolled = time.perf_counter() - started
        print(f"reports: the report job rolled up the 60 days in {rolled:.1f} s")
        db.close()
        return {"workspace": str(workspace), "templates": [str(t) for t in templates],
                "rolled": rolled}

    # The seed and the rollup depend on this module, the schema and the report job, and on
    # the seed functions in use (bench/reports_scale.py puts its own in their place).
    meta, cached = seed_cache.seeded(url, "reports", [
        Path(__file__).read_text(), str(NOTIFICATIONS), inspect.getsource(_seed),
        inspect.getsource(_without_indexes), seed_cache.package_source("engine.reports")],
        seed)
    if cached:
        print(f"reports: {NOTIFICATIONS:,} notifications copied from the cached seed")
    db.connect(reuse_if_open=True)
    workspace = uuid.UUID(meta["workspace"])
    templates = [uuid.UUID(t) for t in meta["templates"]]
    rolled = meta["rolled"]

    page = parse(workspace, {})
    filtered = parse(workspace, {"template": str(templates[1])})
    search = parse(workspace, {"recipient": "user4242@example.net"})
    times: dict[str, list[float]] = {"page": [], "filtered": [], "search": []}
    for _ in range(ROUNDS):
        for name, f in (("page", page), ("filtered", filtered), ("search", search)):
            times[name].append(_timed(lambda f=f: (counts(f), feed(f))))
    def export_rate() -> float:
        rows, started = 0, time.perf_counter()
        for chunk in export_csv(page):
            rows += chunk.count("\n")
        return (rows - 1) / (time.perf_counter() - started)

    pairs = [paired(lambda: _floor_rate(page), export_rate, i) for i in range(EXPORTS)]
    export, floor = median_pair(pairs, lambda rate: rate)
    print(f"reports: export {export:,.0f} rows/s, its floor {floor:,.0f} rows/s")
    db.close()
    return [
        figure("reports_page_p50", statistics.median(times["page"]), "ms (postgresql)", None),
        figure("reports_page_filtered_p50", statistics.median(times["filtered"]),
               "ms (postgresql)", None),
        figure("reports_search_p50", statistics.median(times["search"]), "ms (postgresql)",
               None),
        figure("reports_export", export, "rows/s (postgresql)", floor),
        figure("reports_first_rollup", rolled, "s (60 days, 1M notifications; measured when "
               "the seed was made)", None),
    ]
