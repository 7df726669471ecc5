"""engine/lists/scheduling.py, sweeping.py and recovery.py: a schedule is a row started once
by the lists' pass when its time comes (the allowance taken then, or the list fails with
the reason); a sending list whose job was lost or whose worker died is enqueued again."""

from __future__ import annotations

import datetime as dt

import pytest
from redis import Redis
from rq.job import Job

from engine.database.models import Account, Notification, utcnow
from engine.database.models.lists import RecipientList
from engine.lists import cancelling, progress, recovery, scheduling, sending, sweeping, uploads
from engine.queue.queueing import BULK_QUEUE_NAME
from engine.sending import allowance
from tests import factories

CSV = b"email address,name\nada@example.net,Ada\ngrace@example.net,Grace\n"
NOW = dt.datetime(2026, 12, 6, 1, 0)


@pytest.fixture
def redis(settings):
    return Redis.from_url(settings.redis_url)


@pytest.fixture
def kept(settings):
    ws = factories.workspace()
    checked, kept = uploads.upload(ws, factories.template(ws), "people.csv", CSV, None)
    assert checked.ok
    return kept


def _list_jobs(redis) -> list[str]:
    return [j.decode() for j in redis.lrange(f"rq:queue:{BULK_QUEUE_NAME}", 0, -1)
            if j.decode().startswith("list-")]


def test_a_date_and_time_is_read_in_its_zone_and_checked():
    assert scheduling.parse("2026-12-06 09:30", "Europe/Paris", NOW) == dt.datetime(
        2026, 12, 6, 8, 30)
    assert scheduling.parse("2026-12-06T01:05", "UTC", NOW) == dt.datetime(2026, 12, 6, 1, 5)
    for text, zone, message in [
            ("2026-12-06 09:30", "Mars/Olympus", "Choose a time zone"),
            ("tomorrow", "UTC", "YYYY-MM-DD HH:MM"),
            ("2026-02-30 09:30", "UTC", "does not exist"),
            ("2026-12-06 00:59", "UTC", "has passed"),
            ("2027-01-06 01:01", "UTC", "at most 30 days ahead")]:
        with pytest.raises(scheduling.ScheduleRefused, match=message):
            scheduling.parse(text, zone, NOW)


def test_a_scheduled_list_starts_once_when_its_time_comes(kept, redis):
    when = utcnow() + dt.timedelta(minutes=5)
    assert scheduling.schedule(kept, when, "Europe/London", "user-1") is True
    assert scheduling.schedule(kept, when, "UTC", "user-1") is False  # scheduled already
    shown = progress.progress(progress.summary(kept.workspace, kept.id))
    assert shown.sentence.startswith("Scheduled for ") and "(Europe/London)" in shown.sentence
    assert sweeping.sweep()["started"] == 0 and _list_jobs(redis) == []
    # No allowance is taken while it waits.
    assert redis.get(allowance.key(str(kept.workspace.account_id))) in (None, b"0")
    redis.flushall()  # a Redis restart: the schedule is the row, it stays
    later = when + dt.timedelta(seconds=1)
    assert scheduling.start_due(later) == 1
    assert scheduling.start_due(later) == 0  # another worker's pass: started once only
    fresh = RecipientList.get_by_id(kept.id)
    assert (fresh.status, fresh.sent_by) == ("sending", "user-1")
    assert _list_jobs(redis) == [f"list-{kept.id.hex}-0"]
    assert int(redis.get(allowance.key(str(kept.workspace.account_id)))) == 2


def test_a_list_whose_allowance_no_longer_suffices_fails_and_sends_nothing(kept, redis):
    scheduling.schedule(kept, utcnow() + dt.timedelta(minutes=1), "UTC", None)
    Account.update(monthly_limit=1).execute()
    assert scheduling.start_due(utcnow() + dt.timedelta(minutes=2)) == 0
    fresh = RecipientList.get_by_id(kept.id)
    assert fresh.status == "failed" and "fewer than 2 notifications left" in fresh.problem
    assert progress.progress(progress.summary(kept.workspace, kept.id)).sentence == (
        "Not sent: " + fresh.problem)
    assert _list_jobs(redis) == [] and Notification.select().count() == 0


def test_a_cancelled_schedule_never_starts(kept, redis):
    scheduling.schedule(kept, utcnow() + dt.timedelta(minutes=1), "UTC", None)
    assert scheduling.unschedule(kept) is True
    assert RecipientList.get_by_id(kept.id).status == "checked"
    scheduling.schedule(kept, utcnow() + dt.timedelta(minutes=1), "UTC", None)
    assert cancelling.cancel(kept) is True
    assert scheduling.start_due(utcnow() + dt.timedelta(minutes=2)) == 0
    assert RecipientList.get_by_id(kept.id).status == "cancelled" and _list_jobs(redis) == []


def test_a_list_whose_worker_died_mid_job_is_enqueued_again(kept, redis, monkeypatch):
    sending.start(kept, None)
    (job_id,) = _list_jobs(redis)
    summary = progress.summary(kept.workspace, kept.id)
    assert recovery.resume_if_lost(summary) is False  # queued: it will run
    # A worker takes the job and dies: the job reads "started", its lease runs out.
    redis.lrem(f"rq:queue:{BULK_QUEUE_NAME}", 1, job_id)
    job = Job.fetch(job_id, connection=redis)
    job.set_status("started")
    redis.set(sending.lease_key(kept.id), "1")
    assert recovery.resume_if_lost(summary) is False  # its run holds the lease
    redis.delete(sending.lease_key(kept.id))
    job.started_at = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)
    job.save()
    assert sweeping.sweep()["resumed"] == 1
    assert _list_jobs(redis) == [f"list-{kept.id.hex}-0"]
    sending.expand(str(kept.id))
    assert RecipientList.get_by_id(kept.id).status == "sent"
    assert Notification.select().count() == 2
