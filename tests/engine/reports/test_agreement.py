"""Counts, feed and CSV export are computed from the same events and agree (issue point 4)."""

from __future__ import annotations

import csv
import datetime as dt
import io

from engine.database.models import utcnow
from engine.reports import counts as counts_module
from engine.reports import events, job
from engine.reports.export import HEADER, export_csv
from engine.reports.feed import feed
from engine.reports.filters import parse

LABEL_OF = {"delivered": "Delivered", "bounced": "Bounced", "failed": "Failed"}


def mixed(run):
    """Delivered, bounced (in session and by a later report), failed, opened, clicked,
    unsubscribed, complained, queued and test sends, over three days."""
    made = []
    for days_ago in (0, 2, 5):
        delivered = [run.sent(days_ago=days_ago, to=(f"d{i}-{days_ago}@example.net",))
                     for i in range(4)]
        made += delivered
        run.track(delivered[0], "open")
        run.track(delivered[0], "open")  # twice: still one opened notification
        run.track(delivered[0], "click", "https://example.com/a")
        run.track(delivered[1], "open")
        run.track(delivered[2], "unsubscribe")
        made.append(run.sent("failed", days_ago=days_ago, template=1))
        made.append(run.sent("suppressed", days_ago=days_ago, refused=True,
                             to=(f"gone-{days_ago}@example.net",)))
        made.append(run.sent("suppressed", days_ago=days_ago))  # on the list already
        made.append(run.sent(days_ago=days_ago, channel="sms", template=2, to=("+14155550100",)))
        later = run.sent(days_ago=days_ago, to=(f"later-{days_ago}@example.net",))
        events.record(later, events.Reported("bounced", f"later-{days_ago}@example.net", "dsn",
                                             "5.1.1"))
        complained = run.sent(days_ago=days_ago, to=(f"c-{days_ago}@example.net",))
        events.record(complained, events.Reported("complained", None, "arf"))
        for status in ("delivered", "failed"):
            test = run.sent(status, days_ago=days_ago, is_test=True)
            run.track(test, "open")
    made.append(run.sent("queued"))
    return made


def feed_tally(f):
    tally = counts_module.empty()
    cursor, rows = None, 0
    while True:
        page = feed(f, cursor, size=4)
        for row in page.rows:
            counts_module._add(tally, row.status, 1, (row.complained, row.opened, row.clicked,
                                                      row.unsubscribed))
            rows += 1
        if page.next_cursor is None:
            return tally, rows
        cursor = page.next_cursor


def csv_tally(f):
    text = "".join(export_csv(f))
    reader = csv.DictReader(io.StringIO(text))
    assert tuple(reader.fieldnames) == HEADER
    tally = counts_module.empty()
    for row in reader:
        counts_module._add(tally, row["status"], 1, tuple(int(row[k]) for k in (
            "complained", "opened", "clicked", "unsubscribed")))
    return tally


def assert_agree(run, **values):
    f = parse(run.ws.id, values)
    shown = counts_module.counts(f).totals
    from_feed, rows = feed_tally(f)
    assert shown == from_feed
    assert shown == csv_tally(f)
    assert rows == shown["Accepted"]
    return shown


def test_counts_feed_and_export_agree_after_a_mixed_run(run):
    mixed(run)
    totals = assert_agree(run)
    assert totals == {"Accepted": 31, "Delivered": 18, "Bounced": 6, "Failed": 3,
                      "Complained": 3, "Opened": 6, "Clicked": 3, "Unsubscribed": 3,
                      "Suppressed": 3, "Cancelled": 0, "Pending": 1}
    three_days = (utcnow().date() - dt.timedelta(days=3)).isoformat()
    for values, accepted in (({"status": "delivered"}, 18), ({"status": "bounced"}, 6),
                             ({"channel": "sms"}, 3), ({"template": str(run.templates[1].id)}, 3),
                             ({"recipient": "Gone-2@Example.net"}, 1), ({"from": three_days}, 21)):
        assert assert_agree(run, **values)["Accepted"] == accepted, values


def test_rolled_up_days_count_the_same_and_late_events_move_their_counts(run):
    made = mixed(run)
    before = assert_agree(run)
    job.run_once()
    f = parse(run.ws.id, {})
    marks = counts_module._marks(f)
    spans = counts_module._live_spans(f, marks)
    for days_ago in (2, 5):  # the days with sends are counted by their rollups
        day = dt.datetime.combine(utcnow().date() - dt.timedelta(days=days_ago), dt.time())
        assert not any(start <= day < end for start, end in spans)
    assert spans[-1] == (marks[utcnow().date()], f.end_before)  # today: its last minutes
    assert assert_agree(run) == before
    old = next(n for n in made if n.payload["to"] == ["d3-5@example.net"])  # never clicked
    with events.changing(old):  # as api/tracking.py records a click
        run.track(old, "click", "https://example.com/b")
    bounced = next(n for n in made if n.payload["to"] == ["d1-2@example.net"])
    events.record(bounced, events.Reported("bounced", "d1-2@example.net", "postmark"))
    after = assert_agree(run)
    assert after["Clicked"] == before["Clicked"] + 1
    assert (after["Bounced"], after["Delivered"]) == (before["Bounced"] + 1,
                                                       before["Delivered"] - 1)
    job.run_once()
    assert assert_agree(run) == after


def test_test_sends_never_count(run):
    run.sent(is_test=True)
    run.sent("failed", is_test=True)
    f = parse(run.ws.id, {})
    assert counts_module.counts(f).totals["Accepted"] == 0
    assert feed(f).rows == []
    assert list(csv.reader(io.StringIO("".join(export_csv(f))))) == [list(HEADER)]


def test_the_export_quotes_what_a_spreadsheet_would_run(run):
    from engine.database.models import Template

    Template.update(name="=HYPERLINK(\"http://evil\")").where(
        Template.id == run.templates[0].id).execute()
    run.sent(to=("+14155550100",), channel="sms")
    run.sent(to=("-x@example.net",))
    rows = list(csv.DictReader(io.StringIO("".join(export_csv(parse(run.ws.id, {}))))))
    assert {r["templateName"] for r in rows} == {"'=HYPERLINK(\"http://evil\")"}
    assert sorted(r["recipient"] for r in rows) == ["'-x@example.net", "+14155550100"]
    assert all(r["createdAt"].endswith("Z") and "T" in r["createdAt"] for r in rows)


def test_a_sign_and_a_digit_do_not_exempt_a_formula(run):
    """Issue 37, finding 4: ``-1+HYPERLINK(...)`` and ``+1+1@...`` start with a sign and a
    digit yet are no number: quoted. A cell wholly a number stays as it is."""
    from engine.database.models import Template

    Template.update(name='-1+HYPERLINK("http://evil","x")').where(
        Template.id == run.templates[0].id).execute()
    run.sent(to=("+1+1@example.net",))
    run.sent(to=("@SUM(1)@example.net",))
    run.sent(to=("+14155550100",), channel="sms")
    rows = list(csv.DictReader(io.StringIO("".join(export_csv(parse(run.ws.id, {}))))))
    assert {r["templateName"] for r in rows} == {"'-1+HYPERLINK(\"http://evil\",\"x\")"}
    assert sorted(r["recipient"] for r in rows) == [
        "'+1+1@example.net", "'@sum(1)@example.net", "+14155550100"]
    assert all(r["versionNumber"].isdigit() for r in rows)
