"""`herald data purge` as an operator runs it: one JSON document of what it removed (or,
with --dry-run, would), and `herald notifications show` saying "purged" after."""

from __future__ import annotations

import datetime as dt

from engine.database.models import Notification, utcnow
from engine.retention import policy
from tests import factories
from tests.cli.test_cli import herald  # noqa: F401 -- the fixture


def test_purge_dry_run_then_purge_and_show_says_purged(herald):  # noqa: F811
    ws = factories.workspace()
    policy.set_days(ws.id, 7)
    old = factories.notification(ws, factories.email_payload(to=["ada@example.net"]),
                                 status="delivered",
                                 created_at=utcnow() - dt.timedelta(days=8))
    new = factories.notification(ws, factories.email_payload(), status="delivered")
    would = herald("data", "purge", "--workspace", str(ws.id), "--dry-run")
    assert (would["dryRun"], would["notifications"]) == (True, 1)
    assert herald("notifications", "show", str(old.id))["purged"] is None
    done = herald("data", "purge", "--workspace", str(ws.id))
    assert (done["dryRun"], done["notifications"]) == (False, 1)
    assert done["workspaces"][0]["retentionDays"] == 7
    shown = herald("notifications", "show", str(old.id))
    assert shown["purged"] and shown["status"] == "delivered"
    assert "ada@example.net" not in str(shown)
    assert herald("notifications", "show", str(new.id))["purged"] is None
    assert Notification.get_by_id(new.id).payload["to"] == ["ada@example.net"]
    later = herald("data", "purge", "--as-of", (utcnow() + dt.timedelta(days=8)).isoformat()
                   + "Z", "--dry-run")
    assert later["notifications"] == 1  # the newer one, as of a week later
    refused = herald("data", "purge", "--as-of", "yesterday", ok=False)
    assert refused.returncode == 1 and "--as-of yesterday" in refused.stderr
