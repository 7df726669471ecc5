"""purge_rows_per_s and transactional_p99_during_purge_ms: 50,000 delivered notifications
past their workspace's retention (HERALD_BENCH_PURGE_ROWS to change it), each with an
attempt, an open and its lookup rows, purged by `herald data purge` in its own process,
while one real `herald worker` delivers another workspace's transactional email, accepted
every SPACING seconds and timed to its arrival (as bench.fairness and bench.lists do).
Floor of the p99: the same sends with nothing being purged. PostgreSQL only (the seed is
generate_series). `python -m bench.purge`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from bench import seed_cache
from bench.common import ROOT, bench_database_url, bench_env, figure, redis_server, stop_worker
from bench.fairness import IDLE_SENDS, Sink, _p99, _resets

# 50,000: the rate is per row (500 a transaction, a hundred of them, the same work at any
# size), and the purge of a million took minutes on its own, more than `make bench`'s ten.
ROWS = int(os.environ.get("HERALD_BENCH_PURGE_ROWS", "50000"))

_SEED = """
INSERT INTO notification (id, account_id, workspace_id, template_id, version_number, channel,
  status, is_test, correlation_id, delivery_id, payload, attempts, created_at, updated_at)
SELECT gen_random_uuid(), %(account)s, %(workspace)s, NULL, 1, 'email', 'delivered', false,
  'c' || i, 'd' || i, '{"channel":"email","to":["user' || i || '@example.net"],'
  || '"subject":"Hello","html":"<p>Hello</p>","suppressionKeys":["user' || i
  || '@example.net"]}', 1, ts, ts
FROM (SELECT i, (now() AT TIME ZONE 'UTC') - interval '40 days' - (i * interval '1 second')
      AS ts FROM generate_series(1, %(count)s) AS i) AS s;
INSERT INTO delivery_attempt (notification_id, number, recipient, started_at, duration_ms,
  outcome, provider, response_excerpt)
SELECT id, 1, 'user' || correlation_id || '@example.net', created_at, 120, 'delivered', 'smtp',
  '250 ok' FROM notification WHERE workspace_id = %(workspace)s;
INSERT INTO tracking_event (notification_id, kind, recipient, created_at)
SELECT id, 'open', 'user' || correlation_id || '@example.net', created_at
  FROM notification WHERE workspace_id = %(workspace)s;
INSERT INTO notification_lookup (workspace_id, notification_id, kind, term, created_at)
SELECT workspace_id, id, 'c', correlation_id, created_at FROM notification
 WHERE workspace_id = %(workspace)s
UNION ALL
SELECT workspace_id, id, 'r', payload::json -> 'suppressionKeys' ->> 0, created_at
  FROM notification WHERE workspace_id = %(workspace)s;
"""


def _seed(ws) -> float:
    from engine.database.db import database

    started = time.monotonic()
    with database.atomic():
        database.obj.execute_sql(_SEED, {"account": ws.account_id.hex, "workspace": ws.id.hex,
                                         "count": ROWS})
    database.obj.execute_sql("ANALYZE")
    return time.monotonic() - started


def run() -> list[dict]:
    from config.settings import load_settings
    from engine import runtime
    from engine.database.db import database
    from engine.database.models import Workspace
    from engine.retention import policy
    from tests import factories

    url = bench_database_url()
    if not url.startswith("postgres"):
        print("purge: PostgreSQL is not reachable; the purge figures need it")
        return []
    sink = Sink(bench_env("", ""))
    worker = None
    try:
        with redis_server() as redis:
            env = bench_env(url, redis.url,
                            HERALD_EMAIL_PROVIDER=f"smtp://127.0.0.1:{sink.port}?tls=none")
            subprocess.run([sys.executable, "-m", "cli", "db", "upgrade"], env=env, cwd=ROOT,
                           check=True, capture_output=True)
            runtime.configure(load_settings(env))

            def seed() -> dict:
                database.connect(reuse_if_open=True)
                old, other = factories.workspace(), factories.workspace()
                policy.set_days(old.id, 30)
                policy.set_days(other.id, None)
                seeded = _seed(old)
                print(f"purge: seeded {ROWS:,} notifications past retention in {seeded:.1f} s")
                database.close()
                return {"old": str(old.id), "other": str(other.id)}

            meta, cached = seed_cache.seeded(url, "purge", [Path(__file__).read_text(),
                                                            str(ROWS)], seed)
            if cached:
                print(f"purge: {ROWS:,} notifications copied from the cached seed")
            database.connect(reuse_if_open=True)
            old, other = (Workspace.get_by_id(meta[name]) for name in ("old", "other"))
            worker = subprocess.Popen([sys.executable, "-m", "engine.worker.worker"],
                                      env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, start_new_session=True)
            _resets(other, sink, 1)  # the worker started: not a figure
            idle = _resets(other, sink, IDLE_SENDS)
            started = time.monotonic()
            purge = subprocess.Popen([sys.executable, "-m", "cli", "data", "purge",
                                      "--workspace", str(old.id)], env=env, cwd=ROOT,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            during = _resets(other, sink, None, until=lambda: purge.poll() is not None)
            _out, err = purge.communicate()
            purged_seconds = time.monotonic() - started
            if purge.returncode != 0:
                raise RuntimeError(f"bench.purge: herald data purge failed: {err.strip()}")
            database.close()
    finally:
        if worker is not None:
            stop_worker(worker)
        sink.stop()
    return [
        figure("purge_rows_per_s", ROWS / purged_seconds,
               f"notifications/s, {ROWS:,} purged with their attempts, opens and lookups",
               None),
        figure("transactional_p99_during_purge_ms", _p99(during or idle),
               f"ms, p99 of {len(during)} transactional sends while the purge runs",
               _p99(idle), higher_is_better=False),
    ]


if __name__ == "__main__":
    for row in run():
        print(row)
