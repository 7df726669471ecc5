"""Lists with real worker processes: a list scheduled seconds ahead sends nothing
before its time and every row once after it, with two workers; a cancelled schedule sends
nothing; a worker killed mid-list and replaced sends every row exactly once.

The waits are for conditions (the lists' pass having run, every row delivered), each with
a generous bound; the schedule's near time is chosen after the workers' first pass."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from peewee import fn
from redis import Redis

from engine.database.models import Account, Notification, utcnow
from engine.database.models.inbox import InboxMessage
from engine.database.models.lists import RecipientList
from engine.lists import scheduling, sending, sweeping, uploads
from tests import factories
from tests.conftest import TEST_SECRET_KEY
from tests.web.authoring_support import wait_for

pytestmark = pytest.mark.slow
# The workers' lists' pass every second (5 s in production): a schedule LEAD passes ahead
# still leaves room for several passes before its time.
SWEEP_SECONDS = 1.0
LEAD = dt.timedelta(seconds=8)


@contextmanager
def _workers(settings, count: int) -> Iterator[list[subprocess.Popen]]:
    env = {**os.environ, "HERALD_ENV": "test", "HERALD_DATABASE_URL": settings.database_url,
           "HERALD_REDIS_URL": settings.redis_url, "HERALD_SECRET_KEY": TEST_SECRET_KEY,
           "HERALD_EMAIL_PROVIDER": "inbox://", "HERALD_RECONCILE_AFTER_SECONDS": "2",
           "HERALD_LIST_SWEEP_SECONDS": str(SWEEP_SECONDS)}
    procs = [subprocess.Popen([sys.executable, "-m", "engine.worker.worker"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True) for _ in range(count)]
    try:
        yield procs
    finally:
        for proc in procs:
            _kill(proc, signal.SIGTERM)


def _kill(proc: subprocess.Popen, signum: int) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signum)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _swept_after(redis: Redis, moment: dt.datetime) -> dt.datetime | None:
    raw = redis.get(sweeping.SWEPT_KEY)
    began = dt.datetime.fromisoformat(raw.decode()) if raw else None
    return began if began is not None and began > moment else None


def _list(ws, template, prefix: str, rows: int) -> RecipientList:
    text = "email address,name\n" + "".join(f"{prefix}{i}@example.net,P{i}\n"
                                            for i in range(rows))
    checked, kept = uploads.upload(ws, template, f"{prefix}.csv", text.encode(), None)
    assert checked.ok, checked.problems
    return kept


def _of(kept: RecipientList) -> Any:
    return Notification.correlation_id.startswith(f"list-{kept.id.hex}-")


def test_a_scheduled_list_goes_at_its_time_once_with_two_workers(settings):
    redis = Redis.from_url(settings.redis_url)
    ws = factories.workspace()
    Account.update(monthly_limit=10_000).execute()
    template = factories.template(ws)
    kept = _list(ws, template, "due", 20)
    called_off = _list(ws, template, "off", 3)
    with _workers(settings, 2):
        wait_for(lambda: _swept_after(redis, utcnow() - dt.timedelta(days=1)), "a first pass")
        scheduled_at = utcnow()
        when = scheduled_at + LEAD
        assert scheduling.schedule(kept, when, "UTC", None)
        assert scheduling.schedule(called_off, when, "UTC", None)
        assert scheduling.unschedule(called_off)  # `Cancel schedule` before its time

        # A pass ran after the schedule was set and before its time: nothing was sent.
        began = wait_for(lambda: _swept_after(redis, scheduled_at), "a pass before the time")
        assert began < when, "the workers' pass came only after the list's time"
        assert RecipientList.get_by_id(kept.id).status == "scheduled"
        assert Notification.select().count() == 0

        wait_for(lambda: InboxMessage.select().count() == 20, "every row delivered")
        wait_for(lambda: _swept_after(redis, when), "a pass after the time")
    fresh = RecipientList.get_by_id(kept.id)
    assert fresh.status == "sent" and fresh.accepted == 20
    assert when <= fresh.sent_at < when + dt.timedelta(minutes=1)
    rows = Notification.select(Notification.correlation_id).where(_of(kept))
    assert len({n.correlation_id for n in rows}) == rows.count() == 20
    got = sorted(m.to[0] for m in InboxMessage.select())
    assert got == sorted(f"due{i}@example.net" for i in range(20))  # each once
    assert RecipientList.get_by_id(called_off.id).status == "checked"
    assert Notification.select().where(_of(called_off)).count() == 0


def test_a_worker_killed_mid_list_and_replaced_sends_every_row_once(settings):
    ws = factories.workspace()
    Account.update(monthly_limit=10_000).execute()
    kept = _list(ws, factories.template(ws), "row", 1000)
    assert sending.start(kept, None)
    with _workers(settings, 1) as (first,):
        wait_for(lambda: RecipientList.get_by_id(kept.id).accepted >= 20, "rows accepted",
              timeout=180)
        _kill(first, signal.SIGKILL)  # the worker and its scheduler, mid-list
    at_kill = RecipientList.get_by_id(kept.id)
    assert at_kill.status == "sending" and at_kill.accepted < 1000, "the list ended first"
    with _workers(settings, 1):
        wait_for(lambda: RecipientList.get_by_id(kept.id).status == "sent", "the list to end",
              timeout=300)
    fresh = RecipientList.get_by_id(kept.id)
    assert fresh.accepted == 1000 and fresh.refused == []
    per_row = (Notification.select(Notification.correlation_id,
                                   fn.COUNT(Notification.id).alias("n"))
               .where(_of(kept)).group_by(Notification.correlation_id))
    counts = {row.correlation_id: row.n for row in per_row}
    assert len(counts) == 1000 and set(counts.values()) == {1}


def test_rows_in_two_zones_go_at_their_own_local_times(settings):
    redis = Redis.from_url(settings.redis_url)
    ws = factories.workspace()
    Account.update(monthly_limit=10_000).execute()
    text = ("email address,name,time zone\nada@example.net,Ada,UTC\n"
            "grace@example.net,Grace,Asia/Kolkata\nalan@example.net,Alan,America/New_York\n")
    checked, kept = uploads.upload(ws, factories.template(ws), "z.csv", text.encode(), None)
    assert checked.ok
    with _workers(settings, 2):
        wait_for(lambda: _swept_after(redis, utcnow() - dt.timedelta(days=1)), "a first pass")
        when = utcnow() + LEAD / 2
        assert scheduling.schedule(kept, when, "UTC", None)
        # At the time: the UTC row, and Kolkata's (its local time passed 5.5 hours ago).
        wait_for(lambda: InboxMessage.select().count() == 2, "the rows whose time came")
        went = utcnow()
        first = wait_for(lambda: _swept_after(redis, went), "a pass after they went")
        wait_for(lambda: _swept_after(redis, first), "one more pass")
        summary = RecipientList.get_by_id(kept.id)
        assert sorted(m.to[0] for m in InboxMessage.select()) == [
            "ada@example.net", "grace@example.net"]
        assert (summary.status, summary.accepted, summary.late_rows) == ("sending", 2, 1)
        # New York's moment is the same wall time there: 5 hours later in December.
        assert summary.resume_at == when + dt.timedelta(hours=5)
        assert Notification.select().count() == 2
