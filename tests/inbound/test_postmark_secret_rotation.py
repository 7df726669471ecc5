"""Each workspace's own Postmark webhook secret: rotated, the previous URL is refused at
once and records nothing; a workspace made before the stored secret keeps its derived one
until its first rotation. Real app over real HTTP, real database."""

from __future__ import annotations

import requests

from engine.inbound import postmark
from engine.people.audit import OPERATOR
from engine.people.models import AuditEvent
from engine.store.models import Suppression, Workspace
from engine.store.report_models import NotificationEvent
from tests import factories
from tests.inbound.test_postmark_webhooks import bounce, post, sent


def _events() -> int:
    return NotificationEvent.select().count()


def test_a_new_workspace_has_its_own_stored_secret_not_the_derived_one(with_providers,
                                                                        postmark_api):
    ws = factories.workspace()
    stored = Workspace.get_by_id(ws.id).postmark_secret
    assert stored and len(stored) == 40 and stored != postmark.derived_secret(ws.id)
    assert postmark.webhook_url(ws.id) == with_providers.replace(
        "http://", f"http://herald:{stored}@") + f"/api/inbound/postmark/{ws.id}"
    sent(ws)
    refused = post(with_providers, ws.id, bounce(postmark_api.ids[0]),
                   password=postmark.derived_secret(ws.id))
    assert refused.status_code == 403 and _events() == 0


def test_after_rotation_the_old_secret_is_refused_and_the_new_one_records(with_providers,
                                                                          postmark_api):
    ws = factories.workspace()
    sent(ws)
    old = postmark.secret(ws.id)
    url = postmark.rotate(Workspace.get_by_id(ws.id))
    new = Workspace.get_by_id(ws.id).postmark_secret
    assert new != old and f"herald:{new}@" in url
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
    assert (event.action, event.actor_label) == ("postmark_secret.rotated", OPERATOR)
    assert new not in str(event.details) and new not in event.subject


def test_a_workspace_from_before_the_stored_secret_keeps_its_derived_one(with_providers,
                                                                         postmark_api):
    """What migration step 14 leaves: an empty column, so the URL Postmark already has
    keeps working until an Admin rotates it."""
    ws = factories.workspace()
    Workspace.update(postmark_secret=None).where(Workspace.id == ws.id).execute()
    sent(ws)
    derived = postmark.derived_secret(ws.id)
    assert postmark.secret(ws.id) == derived
    kept = post(with_providers, ws.id, bounce(postmark_api.ids[0], ident=1), password=derived)
    assert kept.json() == {"recorded": True}
    postmark.rotate(Workspace.get_by_id(ws.id))
    before = _events()
    refused = post(with_providers, ws.id, bounce(postmark_api.ids[0], ident=2),
                   password=derived)
    assert refused.status_code == 403 and _events() == before == 1
    assert post(with_providers, ws.id, bounce(postmark_api.ids[0], ident=2)).json() == \
        {"recorded": True}
