"""Retention: old detail goes in small batches once its day is rolled up; counts stay."""

from __future__ import annotations

import datetime as dt

from engine.database.models import DeliveryAttempt, Notification, TrackingEvent, utcnow
from engine.database.models.reports import ReportDay
from engine.reports import job, retention
from engine.reports.counts import counts
from engine.reports.feed import feed
from engine.reports.filters import parse


def test_old_notifications_are_pruned_and_their_counts_kept(run, monkeypatch):
    monkeypatch.setattr(retention, "BATCH", 2)  # several batches for one day
    old = [run.sent(days_ago=100) for _ in range(5)]
    run.track(old[0], "open")
    run.sent("failed", days_ago=100, is_test=True)
    recent = run.sent(days_ago=3)
    long_range = {"from": (utcnow().date() - dt.timedelta(days=120)).isoformat()}
    before = counts(parse(run.ws.id, long_range)).totals
    assert (before["Accepted"], before["Opened"]) == (6, 1)

    done = job.run_once()
    assert done["pruned"] == 6  # five sends and the test send
    assert list(Notification.select(Notification.id).tuples()) == [(recent.id,)]
    assert DeliveryAttempt.select().count() == 1 and TrackingEvent.select().count() == 0
    assert ReportDay.get(ReportDay.day == old[0].created_at.date()).pruned

    report = counts(parse(run.ws.id, long_range))
    assert report.totals == before
    assert "HERALD_REPORT_RETENTION_DAYS" in report.notice
    assert [row.id for row in feed(parse(run.ws.id, long_range)).rows] == [recent.id]
    assert counts(parse(run.ws.id, {})).notice is None  # the last 30 days: all kept


def test_a_day_is_never_pruned_before_it_is_rolled_up(run, settings):
    run.sent("queued", days_ago=100)  # still to deliver: its day cannot be rolled up
    assert job.run_once()["pruned"] == 0
    assert Notification.select().count() == 1


def test_retention_days_is_a_setting(settings):
    from config.settings import ConfigError, load_settings

    assert load_settings({"HERALD_REPORT_RETENTION_DAYS": "7"}).report_retention_days == 7
    assert load_settings({}).report_retention_days == 90
    for bad in ("0", "x", "-1"):
        try:
            load_settings({"HERALD_REPORT_RETENTION_DAYS": bad})
        except ConfigError as err:
            assert err.setting == "HERALD_REPORT_RETENTION_DAYS"
        else:
            raise AssertionError(f"{bad!r} accepted")
