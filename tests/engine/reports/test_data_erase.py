"""The erasure of one person (docs/operations.md, "Erasure"): afterwards no row of the
database holds their address (a full scan of every value of every table; on PostgreSQL a
`pg_dump` of the rows too), another recipient's data is untouched, the counts stay, and
the next send to them is still suppressed, by a real delivery job."""

from __future__ import annotations

import json
import subprocess
from urllib.parse import urlsplit

from engine.callbacks import targets
from engine.catalog import suppressions
from engine.database.models import Notification
from engine.database.models.callbacks import Callback
from engine.database.models.inbox import CaughtWebhook, InboxMessage
from engine.database.models.lists import RecipientList
from engine.database.models.people import AuditEvent
from engine.database.models.retention import PurgeWaiting
from engine.delivery.jobs import deliver_notification
from engine.people import audit
from engine.reports import events
from engine.reports.counts import counts
from engine.reports.filters import parse
from engine.retention.erasure import erase
from tests import factories
from tests.cli.test_cli import herald  # noqa: F401 -- the fixture

ADA = "Ada.Lovelace@Example.net"


def _person_everywhere(run):
    """Ada in every table a recipient reaches: notifications (one still queued), attempts,
    opens and clicks, a bounce (and so her suppression), callbacks, the dev inbox and its
    webhook catcher, a list's rows, an audit entry; Bob beside her."""
    targets.set_target(run.ws, "https://127.0.0.1:8443/cb")  # nothing calls it here
    theirs = run.sent(to=(ADA, "bob@example.net"))
    run.track(theirs, "click", "https://example.com/?who=ada.lovelace@example.net")
    bounced = run.sent(to=(ADA,), days_ago=1)
    events.record(bounced, events.Reported("bounced", ADA, "dsn", f"5.1.1 <{ADA}> unknown"))
    queued = run.sent("queued", to=(ADA,))
    bob = run.sent(to=("bob@example.net",))
    Callback.create(workspace=run.ws, notification_id=theirs.id, delivery_id="d-1",
                    event="notification.delivered", recipient=ADA, status="delivered",
                    body=json.dumps({"recipient": ADA}))
    CaughtWebhook.create(name="cb", body=json.dumps({"to": ADA}), verdict="ok",
                         workspace_id=str(run.ws.id), notification_id=str(theirs.id))
    InboxMessage.create(workspace_id=str(run.ws.id), notification_id=str(bounced.id),
                        channel="email", to=[ADA], text="Hello Ada")
    RecipientList.create(workspace=run.ws, template=run.templates[0], version_number=1,
                         channel="email", filename="people.csv", row_count=2, status="sent",
                         columns=["email address", "name"],
                         rows=[[2, ADA, ["Ada"]], [3, "bob@example.net", ["Bob"]]])
    # A refused file keeps its problems and its first rows as a table until shown.
    RecipientList.create(workspace=run.ws, template=run.templates[0], version_number=0,
                         channel="email", filename="bad.csv", row_count=0, status="refused",
                         problems={"badRows": 1, "items": [[3, f"{ADA} is on the suppression "
                                                                "list", 0]],
                                   "table": {"header": ["email address", "name"], "more": 0,
                                             "rows": [[2, ["bob@example.net", "Bob"]],
                                                      [3, [ADA, "Ada"]]]}})
    audit.record(run.ws, None, "suppression.added", ADA.lower(), {"reason": "manual"})
    return theirs, queued, bob


def test_erase_leaves_no_trace_and_the_address_stays_suppressed(run, db_text, settings):
    theirs, queued, bob = _person_everywhere(run)
    totals = counts(parse(run.ws.id, {})).totals
    assert ADA.lower() in db_text().lower()

    done = erase(run.ws.id, " ada.lovelace@EXAMPLE.net ")
    assert done["notifications"] == 2 and done["waiting"] == 1
    assert done["suppressionsKept"] == 1 and done["listRows"] == 1
    assert counts(parse(run.ws.id, {})).totals == totals
    # The queued one is not touched until it is finished; then the purge takes it.
    assert Notification.get_by_id(queued.id).payload["to"] == [ADA]
    Notification.update(status="delivered").where(Notification.id == queued.id).execute()
    from engine.retention.purge import purge

    purge(run.ws.id)
    assert PurgeWaiting.select().count() == 0

    text = db_text().lower()
    assert "ada.lovelace" not in text
    if urlsplit(settings.database_url).scheme.startswith("postgres"):
        dump = subprocess.run(["pg_dump", "--data-only", settings.database_url],
                              capture_output=True, text=True, check=True).stdout
        assert "ada.lovelace" not in dump.lower() and "bob@example.net" in dump
    assert Notification.get_by_id(bob.id).payload["to"] == ["bob@example.net"]
    found = [r.id for r in __import__("engine.reports.feed", fromlist=["feed"]).feed(
        parse(run.ws.id, {"recipient": ADA})).rows]
    assert theirs.id in found  # the exact address still finds, through its hash
    (entry,) = AuditEvent.select().where(AuditEvent.action == "data.erased")
    assert entry.subject == "a recipient" and entry.details["notifications"] == 2

    # The next send to her is still suppressed, by the delivery job's own claim.
    again = factories.notification(run.ws, factories.email_payload(to=[ADA]))
    assert deliver_notification(str(again.id)) == "suppressed"
    assert Notification.get_by_id(again.id).status == "suppressed"
    assert suppressions  # the list module, whose rows the claim read


def test_erase_through_the_command_line(run, herald):  # noqa: F811
    _person_everywhere(run)
    done = herald("data", "erase", ADA, "--workspace", str(run.ws.id))
    assert done["notifications"] == 2 and done["suppressionsKept"] == 1
    assert done["workspaces"][0]["workspaceId"] == str(run.ws.id)
    assert "lovelace" not in json.dumps(done).lower()  # ids are hex: "ada" can be in one
    refused = herald("data", "erase", "two words", ok=False)
    assert refused.returncode == 1 and "one email address or phone number" in refused.stderr


def test_erasing_a_number_takes_its_sms_and_what_it_texted_in(run, db_text):
    from engine.database.models.recipients import InboundMessage

    sms = run.sent(to=("+14155550199",), channel="sms", template=2)
    InboundMessage.create(workspace=run.ws, provider="twilio", message_id="SM1",
                          sender="+14155550199", recipient="+14155550100", text="HELP")
    done = erase(run.ws.id, "+14155550199")
    assert (done["notifications"], done["inboundMessages"]) == (1, 1)
    assert set(Notification.get_by_id(sms.id).payload) == {"purgedAt"}
    assert "14155550199" not in db_text()
