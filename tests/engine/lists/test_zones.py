"""The optional ``time zone`` column: checked row by row; a scheduled list sends each row at
the schedule's local time in the row's own zone (the clock is the test's), rows whose time
had passed at the start go at once and are counted; sent at once, every row goes at once."""

from __future__ import annotations

import datetime as dt

import pytest
from redis import Redis

from engine.database.models import Notification
from engine.database.models.lists import RecipientList
from engine.lists import progress, recovery, scheduling, sending, uploads
from engine.queue.queueing import BULK_QUEUE_NAME
from tests import factories

CSV = ("email address,name,Time Zone\n"
       "ada@example.net,Ada,UTC\n"
       "grace@example.net,Grace,Asia/Kolkata\n"
       "alan@example.net,Alan,America/New_York\n"
       "edsger@example.net,Edsger,\n")
NINE = dt.datetime(2026, 12, 7, 9, 0)  # 09:00 in Europe/London (UTC+0 in December)


@pytest.fixture
def redis(settings):
    return Redis.from_url(settings.redis_url)


class Clock:
    def __init__(self, monkeypatch) -> None:
        self.now = NINE - dt.timedelta(hours=1)
        for module in (sending, recovery, scheduling):
            monkeypatch.setattr(module, "utcnow", lambda: self.now)


def _run_jobs(redis, list_id) -> None:
    key = f"rq:queue:{BULK_QUEUE_NAME}"
    while (job := next((j for j in redis.lrange(key, 0, -1) if j.startswith(b"list-")),
                       None)) is not None:
        redis.lrem(key, 1, job)
        sending.expand(str(list_id))


def test_a_bad_time_zone_names_its_row(settings):
    ws = factories.workspace()
    checked, kept = uploads.upload(ws, factories.template(ws), "z.csv", (
        CSV + "barbara@example.net,Barbara,Mars/Olympus\n").encode(), None)
    assert kept is None and [str(p) for p in checked.problems] == [
        "row 6: time zone 'Mars/Olympus' is not a time zone name such as Europe/London or "
        "America/New_York"]


def test_each_row_goes_at_the_schedules_local_time_in_its_own_zone(settings, redis,
                                                                   monkeypatch):
    clock = Clock(monkeypatch)
    ws = factories.workspace()
    checked, kept = uploads.upload(ws, factories.template(ws), "z.csv", CSV.encode(), None)
    assert checked.ok and checked.tags == ["name"]  # the zone column is no tag
    assert scheduling.schedule(kept, NINE, "Europe/London", None)

    clock.now = NINE + dt.timedelta(seconds=1)
    assert scheduling.start_due(clock.now) == 1
    _run_jobs(redis, kept.id)
    row_of = {n.correlation_id.rsplit("-", 1)[1] for n in Notification.select()}
    # Kolkata's 09:00 was 03:30 UTC: passed, sent at once; UTC and the empty cell now.
    assert row_of == {"2", "3", "5"}
    summary = progress.summary(ws, kept.id)
    assert (summary.status, summary.late_rows, summary.resume_at) == (
        "sending", 1, dt.datetime(2026, 12, 7, 14, 0))
    sentence = progress.progress(summary).sentence
    assert sentence == ("Sending: 3 of 4 rows accepted; the others go at their recipients' "
                        "local time, the next at 14:00 UTC on 7 Dec 2026. 1 row whose local "
                        "time had passed when the list started went at once.")

    clock.now = dt.datetime(2026, 12, 7, 13, 59)  # New York's 09:00 has not come
    assert recovery.resume_if_lost(progress.summary(ws, kept.id)) is False
    clock.now = dt.datetime(2026, 12, 7, 14, 0, 1)
    assert recovery.resume_if_lost(progress.summary(ws, kept.id)) is True
    _run_jobs(redis, kept.id)
    done = RecipientList.get_by_id(kept.id)
    assert (done.status, done.accepted) == ("sent", 4) and Notification.select().count() == 4


def test_a_list_sent_at_once_sends_every_zone_at_once(settings, redis):
    ws = factories.workspace()
    _, kept = uploads.upload(ws, factories.template(ws), "z.csv", CSV.encode(), None)
    sending.start(kept, None)
    _run_jobs(redis, kept.id)
    assert RecipientList.get_by_id(kept.id).status == "sent"
    assert Notification.select().count() == 4
