"""Provider reports suppress for all mail (a complaint widens an unsubscribe), and the
timeline says what each entry suppresses and which recipients are on the list now."""

from __future__ import annotations

from engine.catalog import suppressions
from engine.database.models import Suppression, TrackingEvent
from engine.reports import events
from engine.reports.timeline import timeline


def test_a_complaint_widens_an_unsubscribe_and_soft_bounces_suppress_all(run):
    n = run.sent(to=("ada@example.net", "soft@example.net", "ok@example.net"))
    TrackingEvent.create(notification=n, kind="unsubscribe", recipient="ada@example.net")
    suppressions.add(run.ws.id, ["ada@example.net"], "unsubscribe")
    found = timeline(run.ws.id, str(n.id))
    assert found.suppressions == {"ada@example.net": "marketing"}
    unsubscribed = next(e for e in found.entries if e.kind == "unsubscribed")
    assert unsubscribed.detail["suppresses"] == "marketing"
    events.record(n, events.Reported("complained", "ada@example.net", "arf", "abuse"))
    for i in range(events.SOFT_BOUNCE_LIMIT):
        events.record(n, events.Reported("soft_bounced", "soft@example.net", "dsn",
                                         "4.2.2 mailbox full", dedupe_key=f"soft-{i}"))
    rows = {r.address: (r.reason, r.scope) for r in Suppression.select()}
    assert rows == {"ada@example.net": ("complaint", "all"),
                    "soft@example.net": ("soft-bounces", "all")}
    found = timeline(run.ws.id, str(n.id))
    assert found.suppressions == {"ada@example.net": "all", "soft@example.net": "all"}
    complained = next(e for e in found.entries if e.kind == "complained")
    assert complained.detail["suppresses"] == "all"
    assert all("suppresses" not in e.detail for e in found.entries if e.kind == "soft_bounced")
