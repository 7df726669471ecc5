"""The feed's keyset pages, search, bad filters, and a notification's timeline."""

from __future__ import annotations

import pytest

from engine.reports import events, job
from engine.reports.feed import feed
from engine.reports.filters import FilterError, parse
from engine.reports.timeline import timeline
from tests import factories


def test_pages_are_newest_first_without_gaps_or_repeats(run):
    made = [run.sent(minutes=i) for i in range(7)]
    seen, cursor = [], None
    while True:
        page = feed(parse(run.ws.id, {}), cursor, size=3)
        seen += [row.id for row in page.rows]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert seen == [n.id for n in made]  # made[0] is the newest


def test_search_by_recipient_and_correlation_id_before_and_after_indexing(run):
    ada = run.sent(to=("Ada@Example.net",))
    run.sent(to=("bob@example.net",))
    for _ in range(2):  # the unindexed rows, then through the lookup index
        rows = feed(parse(run.ws.id, {"recipient": "ada@example.net"})).rows
        assert [(r.id, r.recipients) for r in rows] == [(ada.id, ["ada@example.net"])]
        rows = feed(parse(run.ws.id, {"correlationId": ada.correlation_id})).rows
        assert [r.id for r in rows] == [ada.id]
        job.run_once()


def test_another_workspaces_notifications_never_show(run):
    other = factories.workspace()
    theirs = factories.notification(other, factories.email_payload(to=["ada@example.net"]))
    assert feed(parse(run.ws.id, {"recipient": "ada@example.net"})).rows == []
    assert timeline(run.ws.id, str(theirs.id)) is None
    assert timeline(run.ws.id, theirs.correlation_id) is None


@pytest.mark.parametrize(("values", "field"), [
    ({"from": "yesterday"}, "from"), ({"from": "2026-02-02", "to": "2026-01-01"}, "from"),
    ({"template": "x"}, "template"), ({"channel": "e mail"}, "channel"),
    ({"status": "lost"}, "status"), ({"recipient": "a b"}, "recipient"),
    ({"correlationId": "a'; drop"}, "correlationId")])
def test_bad_filters_name_their_field(values, field):
    with pytest.raises(FilterError) as error:
        parse("00000000-0000-0000-0000-000000000001", values)
    assert error.value.field == field


def test_a_forged_cursor_is_a_filter_error(run):
    with pytest.raises(FilterError):
        feed(parse(run.ws.id, {}), "2026-01-01T00:00:00_not-hex")


def test_the_timeline_tells_everything_in_order(run):
    n = run.sent()
    run.track(n, "open")
    run.track(n, "click", "https://example.com/pricing")
    events.record(n, events.Reported("complained", "ada@example.net", "arf", "abuse"))
    found = timeline(run.ws.id, n.correlation_id)
    kinds = [e.kind for e in found.entries]
    assert kinds[0] == "accepted" and set(kinds) >= {"attempt", "delivered", "opened",
                                                     "clicked", "complained"}
    attempt = next(e for e in found.entries if e.kind == "attempt")
    assert attempt.detail["provider"] == "smtp" and attempt.detail["outcome"] == "delivered"
    click = next(e for e in found.entries if e.kind == "clicked")
    assert click.detail["url"] == "https://example.com/pricing"
    assert found.status == "delivered" and found.recipients == ["ada@example.net"]


def test_a_webhook_is_listed_and_found_by_its_host_never_its_query(run):
    payload = {"channel": "webhook", "url": "https://user:pw@Hooks.Example.com:8443/in?t=s3cret",
               "body": "{}", "contentType": "application/json", "headers": {}}
    hook = factories.notification(run.ws, payload, status="delivered")
    for _ in range(2):  # the unindexed row, then through the lookup index
        rows = feed(parse(run.ws.id, {"recipient": "hooks.example.com"})).rows
        assert [(r.id, r.recipients) for r in rows] == [(hook.id, ["hooks.example.com"])]
        job.run_once()
