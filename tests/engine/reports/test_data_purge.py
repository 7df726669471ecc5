"""The purge past a workspace's retention (docs/operations.md, "Data retention"): old
notifications lose recipients and content while counts, feed and CSV stay as they were
and an exact-address search still finds them; nothing still to deliver is touched; a dry
run changes nothing; each purge writes an audit entry."""

from __future__ import annotations

import datetime as dt

from engine.database.models import DeliveryAttempt, Notification, TrackingEvent, utcnow
from engine.database.models.people import AuditEvent
from engine.database.models.retention import PurgeWaiting
from engine.reports.feed import feed
from engine.reports.filters import parse
from engine.retention import policy
from engine.retention.purge import due, purge
from tests.engine.reports.conftest import get
from tests.engine.reports.test_agreement import assert_agree, mixed


def _rows(ws):
    f = parse(ws.id, {})
    return [(r.id, r.status, r.opened, r.clicked, r.recipients) for r in feed(f, size=500).rows]


def _search(ws, recipient):
    return [r.id for r in feed(parse(ws.id, {"recipient": recipient}), size=500).rows]


def test_old_notifications_lose_recipients_and_content_and_the_reports_agree(run):
    made = mixed(run)
    old_queued = run.sent("queued", days_ago=10, to=("late@example.net",))
    policy.set_days(run.ws.id, 3)
    before = assert_agree(run)
    rows_before = _rows(run.ws)
    found_before = _search(run.ws, "D0-5@example.net")
    assert len(found_before) == 1

    limit = utcnow() - dt.timedelta(days=3)
    due_now = Notification.select().where(Notification.created_at < limit,
                                          Notification.status != "queued").count()
    result = purge(run.ws.id)
    old = [n for n in made if get(n).created_at < limit]
    assert result["notifications"] == due_now > len(old) > 0  # test sends too
    assert result["waiting"] == 1 and result["complete"] is True

    assert assert_agree(run) == before
    rows_after = _rows(run.ws)
    assert [r[:4] for r in rows_after] == [r[:4] for r in rows_before]
    purged = {n.id for n in old}
    for nid, _, _, _, recipients in rows_after:
        if nid in purged:
            assert recipients and set(recipients) == {"purged"}
    assert _search(run.ws, "D0-5@example.net") == found_before  # by its keyed hash
    for n in old:
        row = get(n)
        assert set(row.payload) == {"purgedAt"}
        assert row.last_error is None
        for attempt in DeliveryAttempt.select().where(DeliveryAttempt.notification == n.id):
            assert attempt.error is None and attempt.response_excerpt is None
            assert attempt.recipient is None or attempt.recipient.startswith("h:")
        for event in TrackingEvent.select().where(TrackingEvent.notification == n.id):
            assert event.url is None
    fresh = [n for n in made if n.id not in purged]
    assert all("purgedAt" not in get(n).payload for n in fresh)
    # Still to deliver: untouched, waiting; purged by the first run that finds it finished.
    assert get(old_queued).payload == old_queued.payload
    assert PurgeWaiting.get_by_id(old_queued.id)
    assert purge(run.ws.id)["notifications"] == 0  # nothing twice
    Notification.update(status="delivered").where(Notification.id == old_queued.id).execute()
    assert purge(run.ws.id)["notifications"] == 1
    assert set(get(old_queued).payload) == {"purgedAt"}
    assert PurgeWaiting.select().count() == 0
    events = list(AuditEvent.select().where(AuditEvent.action == "data.purged"))
    assert len(events) == 2 and events[0].details["notifications"] == result["notifications"]
    assert "@" not in str([(e.subject, e.details) for e in events])


def test_a_dry_run_changes_nothing_and_says_what_a_purge_would_do(run, db_text):
    mixed(run)
    policy.set_days(run.ws.id, 1)
    before = db_text()
    would = purge(run.ws.id, dry_run=True)
    assert would["notifications"] > 0 and would["dryRun"] is True
    assert db_text() == before
    done = purge(run.ws.id)
    assert {k: done[k] for k in ("notifications", "attempts", "events", "trackingEvents")} == {
        k: would[k] for k in ("notifications", "attempts", "events", "trackingEvents")}
    assert db_text() != before


def test_as_of_and_a_workspace_kept_forever(run):
    run.sent(days_ago=40)
    policy.set_days(run.ws.id, None)  # a workspace older than retention: kept forever
    assert purge(run.ws.id)["notifications"] == 0
    policy.set_days(run.ws.id, 30)
    assert purge(run.ws.id, as_of=utcnow() - dt.timedelta(days=20))["notifications"] == 0
    assert purge(run.ws.id)["notifications"] == 1


def test_the_daily_run_is_due_once_a_day_after_its_hour():
    morning = dt.datetime(2026, 3, 1, 2, 59)
    assert not due(morning, None)
    assert due(morning.replace(hour=3), None)
    assert due(morning.replace(hour=23), "2026-02-28")
    assert not due(morning.replace(hour=23), "2026-03-01")


def test_the_worker_loop_runs_the_days_purge_once_under_its_lock(run, monkeypatch):
    """The loop `herald worker` runs beside its other periodic tasks: past its hour it takes
    the Redis lock, purges, and marks the day done, so the next check purges nothing."""
    import threading

    from engine import runtime
    from engine.retention import purge as purging
    from engine.worker.worker import PERIODIC_TASKS

    assert ("herald-data-purge", purging.run_periodically) in PERIODIC_TASKS
    old = run.sent(days_ago=40)
    policy.set_days(run.ws.id, 30)
    monkeypatch.setattr(purging, "HOUR", 0)  # whatever the hour the test runs at
    stop = threading.Event()
    loop = threading.Thread(target=purging.run_periodically, args=(stop, 0.05), daemon=True)
    loop.start()
    try:
        deadline = dt.datetime.now() + dt.timedelta(seconds=60)
        while not runtime.redis().get(purging.DONE_KEY) and dt.datetime.now() < deadline:
            stop.wait(0.05)
        done_day = runtime.redis().get(purging.DONE_KEY)
        later = run.sent(days_ago=40)  # the day is done: not purged until tomorrow
        stop.wait(0.5)
    finally:
        stop.set()
        loop.join(10)
    assert "purgedAt" in get(old).payload
    assert done_day in (utcnow().date().isoformat(), utcnow().date().isoformat().encode())
    assert "purgedAt" not in get(later).payload
