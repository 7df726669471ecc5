"""list_rows_per_s and transactional_p99_during_list_ms (issue 42): a 50,000-row list
(HERALD_BENCH_LIST_ROWS to change it) sent to a template, timed from the upload (read,
check, keep) to every row accepted and its job enqueued, by one real `herald worker`
process that also delivers (the bench's SMTP server receives everything); while it runs,
another workspace's transactional email is accepted every ``SPACING`` seconds and timed
to its arrival, as bench.fairness times password resets during a fan-out.
Floor of the p99: the same sends with the worker idle. `python -m bench.lists`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from bench.common import ROOT, bench_database_url, bench_env, figure, redis_server, stop_worker
from bench.fairness import IDLE_SENDS, Sink, _p99, _resets

# 20,000 rows: forty batches, enough for a steady rate; 50,000 took a minute at 800 rows/s.
ROWS = int(os.environ.get("HERALD_BENCH_LIST_ROWS", "20000"))
TIMEOUT = 1800.0


def _file(rows: int) -> bytes:
    lines = ["email address,name,code"]
    lines += [f"row{i}@example.net,Person {i},{i:06d}" for i in range(rows)]
    return ("\n".join(lines) + "\n").encode()


def run() -> list[dict]:
    from config.settings import load_settings
    from engine import runtime
    from engine.database.db import database
    from engine.database.models.lists import RecipientList
    from engine.lists import sending, uploads
    from tests import factories

    sink = Sink(bench_env("", ""))
    worker = None
    try:
        with redis_server() as redis:
            env = bench_env(bench_database_url(), redis.url,
                            HERALD_EMAIL_PROVIDER=f"smtp://127.0.0.1:{sink.port}?tls=none")
            subprocess.run([sys.executable, "-m", "cli", "db", "upgrade"], env=env, cwd=ROOT,
                           check=True, capture_output=True)
            runtime.configure(load_settings(env))
            database.connect(reuse_if_open=True)
            sender, other = factories.workspace(), factories.workspace()
            template = factories.template(sender, content={
                "subject": "Hello {{name}}", "body": "<p>Your code is {{code}}.</p>"})
            worker = subprocess.Popen([sys.executable, "-m", "engine.worker.worker"],
                                      env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, start_new_session=True)
            _resets(other, sink, 1)  # the worker started: not a figure
            idle = _resets(other, sink, IDLE_SENDS)
            data = _file(ROWS)
            started = time.monotonic()
            checked, kept = uploads.upload(sender, template, "bench.csv", data, None)
            assert kept is not None, checked.problems[:3]
            checked_at = time.monotonic()
            sending.start(kept, None)

            def finished() -> bool:
                status = RecipientList.select(RecipientList.status).where(
                    RecipientList.id == kept.id).scalar()
                if time.monotonic() - started > TIMEOUT:
                    raise RuntimeError("bench.lists: the list did not finish in time")
                return status == sending.SENT

            during = _resets(other, sink, None, until=finished)
            while not finished():
                time.sleep(0.05)
            enqueued_at = time.monotonic()
            database.close()
    finally:
        if worker is not None:
            stop_worker(worker)
        sink.stop()
    return [
        figure("list_rows_per_s", ROWS / (enqueued_at - started),
               f"rows/s, {ROWS:,} rows from upload to all enqueued", None),
        figure("list_check_seconds", checked_at - started,
               f"s, {ROWS:,} rows read, checked and kept", None, higher_is_better=False),
        figure("transactional_p99_during_list_ms", _p99(during),
               f"ms, p99 of {len(during)} transactional sends while the list is sent",
               _p99(idle), higher_is_better=False),
    ]


if __name__ == "__main__":
    for row in run():
        print(row)
