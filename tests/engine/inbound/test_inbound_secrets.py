"""Each workspace's own inbound secret per provider: made on first use, rotated (the
previous URL is refused at once and records nothing), never another workspace's or another
provider's, never made by a caller knocking. Real app over real HTTP, real database."""

from __future__ import annotations

import requests

from engine.database.models import Suppression, Workspace
from engine.database.models.inbound import InboundSecret
from engine.database.models.people import AuditEvent
from engine.database.models.reports import NotificationEvent
from engine.inbound import workspace_secrets
from engine.people.audit import OPERATOR
from tests import factories
from tests.engine.inbound.test_postmark_webhooks import bounce, post, sent


def _events() -> int:
    return NotificationEvent.select().count()


def test_a_workspace_gets_its_own_random_secret_and_url_on_first_use(with_providers):
    ws, other = factories.workspace(), factories.workspace()
    assert not InboundSecret.select().exists()
    mine = workspace_secrets.secret(ws.id, "postmark")
    assert len(mine) == 40 and mine == workspace_secrets.secret(ws, "postmark")
    assert mine != workspace_secrets.secret(other.id, "postmark")
    assert workspace_secrets.webhook_url(ws.id, "postmark") == with_providers.replace(
        "http://", f"http://herald:{mine}@") + f"/api/inbound/postmark/{ws.id}"
    (row,) = InboundSecret.select().where(InboundSecret.workspace == ws.id)
    assert row.rotated_at is None
    db = InboundSecret._meta.database
    (sealed,) = db.execute_sql(f'SELECT "secret" FROM "inbound_secret" WHERE "id" = {db.param}',
                               (row.id,)).fetchone()
    assert sealed.startswith("enc:v1:") and mine not in sealed


def test_a_call_makes_no_secret_and_a_workspace_without_one_refuses_all(with_providers,
                                                                        postmark_api):
    ws = factories.workspace()
    sent(ws)
    for password in ("", "0" * 40, "guess"):
        answer = post(with_providers, ws.id, bounce(postmark_api.ids[0]), password=password)
        assert answer.status_code in (401, 403)
    assert not InboundSecret.select().exists() and _events() == 0


def test_after_rotation_the_old_secret_is_refused_and_the_new_one_records(with_providers,
                                                                          postmark_api):
    ws = factories.workspace()
    sent(ws)
    old = workspace_secrets.secret(ws.id, "postmark")
    url = workspace_secrets.rotate(Workspace.get_by_id(ws.id), "postmark")
    new = workspace_secrets.secret(ws.id, "postmark")
    assert new != old and f"herald:{new}@" in url
    assert InboundSecret.get(InboundSecret.workspace == ws.id).rotated_at is not None
    for attempt in (post(with_providers, ws.id, bounce(postmark_api.ids[0]), password=old),
                    requests.post(f"{with_providers}/api/inbound/postmark/{ws.id}",
                                  params={"token": old}, json=bounce(postmark_api.ids[0]),
                                  timeout=10)):
        assert attempt.status_code == 403
    assert _events() == 0 and Suppression.select().count() == 0
    accepted = post(with_providers, ws.id, bounce(postmark_api.ids[0]), password=new)
    assert accepted.status_code == 200 and accepted.json() == {"recorded": True}
    assert NotificationEvent.get().kind == "bounced"
    assert Suppression.get(Suppression.workspace == ws.id).address == "ada@example.net"
    (event,) = AuditEvent.select().where(AuditEvent.workspace == ws.id)
    assert (event.action, event.actor_label, event.subject, event.details) == (
        "inbound_secret.rotated", OPERATOR, "Postmark", {"provider": "postmark"})
    assert new not in str(event.details) and new not in event.subject


def test_the_secret_as_a_query_token_is_accepted_as_basic_auth_is(with_providers,
                                                                 postmark_api):
    ws = factories.workspace()
    sent(ws)
    answer = requests.post(f"{with_providers}/api/inbound/postmark/{ws.id}",
                           params={"token": workspace_secrets.secret(ws.id, "postmark")},
                           json=bounce(postmark_api.ids[0]), timeout=10)
    assert answer.status_code == 200 and answer.json() == {"recorded": True}


def test_a_provider_without_per_workspace_events_has_no_secret(with_providers):
    ws = factories.workspace()
    for name in ("twilio", "nobody"):
        try:
            workspace_secrets.secret(ws.id, name)
        except LookupError as err:
            assert "postmark" in str(err)
        else:
            raise AssertionError(f"{name} has a per-workspace secret")
    assert not InboundSecret.select().exists()
