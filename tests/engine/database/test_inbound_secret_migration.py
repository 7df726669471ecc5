"""Migration steps 14 and 25 on a database made before them: step 14 leaves existing
workspaces without a stored Postmark secret (their derived one stands); step 25 copies every
workspace's Postmark secret, stored or derived, into the inbound secrets, so the URL
Postmark already has records its events after the upgrade and a forged call still counts
for nothing. Real app, real database."""

from __future__ import annotations

import uuid

import pytest

from engine.database import secrets
from engine.database.migrations import MIGRATIONS, _inbound_secrets, _postmark_secrets, upgrade
from engine.database.models import DeliveryAttempt, Workspace
from engine.database.models.inbound import InboundSecret
from engine.inbound import workspace_secrets
from tests import factories
from tests.support.old_schema import database_before


def _derived(workspace_id) -> str:
    """What `herald inbound postmark-url` printed for a workspace made before step 14."""
    return secrets.keyed_digest(f"herald postmark webhook {str(workspace_id).lower()}")


def _insert(old, name: str, sealed: str | None = None) -> uuid.UUID:
    account = factories.account()
    ident = uuid.uuid4()
    old.execute_sql('INSERT INTO "workspace" ("id", "account_id", "name", "signing_secret", '
                    '"postmark_secret", "created_at") VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP)',
                    (Workspace.id.db_value(ident), Workspace.account.db_value(account.id), name,
                     Workspace.signing_secret.db_value("whsec_x"), sealed))
    return ident


@pytest.fixture
def before_14(settings, tmp_path):
    with database_before(_postmark_secrets, tmp_path) as old:
        yield old


@pytest.fixture
def client(settings):
    """The real app, made first: making it binds the settings' database, which the old one
    then replaces."""
    from cli.app import create_app

    return create_app(settings).test_client()


@pytest.fixture
def before_25(client, tmp_path):
    """A database of step 24: Postmark secrets in the workspace's column, no inbound table."""
    with database_before(_inbound_secrets, tmp_path,
                         'ALTER TABLE "workspace" ADD COLUMN "postmark_secret" TEXT') as old:
        yield old


def test_step_14_adds_the_column_its_step_25_reads(before_14):
    assert MIGRATIONS.index(_postmark_secrets) + 1 == 14
    columns = {c.name for c in before_14.get_columns("workspace")}
    assert "postmark_secret" not in columns
    upgrade(before_14)
    assert "postmark_secret" in {c.name for c in before_14.get_columns("workspace")}
    _postmark_secrets(before_14)  # idempotent


def test_step_25_copies_stored_and_derived_postmark_secrets(before_25):
    assert MIGRATIONS.index(_inbound_secrets) + 1 == 25
    stored = _insert(before_25, "rotated", secrets.encrypt("a" * 40))
    derived = _insert(before_25, "from-before-14")
    assert upgrade(before_25) == {"from": 24, "to": len(MIGRATIONS)}
    assert workspace_secrets.secret(stored, "postmark") == "a" * 40
    assert workspace_secrets.secret(derived, "postmark") == _derived(derived)
    assert InboundSecret.select().count() == 2
    _inbound_secrets(before_25)  # idempotent: nothing copied twice, nothing replaced
    assert InboundSecret.select().count() == 2
    assert workspace_secrets.secret(stored, "postmark") == "a" * 40


def test_an_event_with_the_url_from_before_the_upgrade_is_recorded_and_a_forged_one_not(
        db, client):
    """Step 25's copy on this test's own database (SQLite or PostgreSQL), whose workspaces
    hold their Postmark secrets as a release before it left them."""
    from engine.database.models.reports import NotificationEvent

    ws, old_ws = factories.workspace(), factories.workspace()
    InboundSecret.delete().execute()
    db.execute_sql('UPDATE "workspace" SET "postmark_secret" = %s WHERE "id" = %s'
                   .replace("%s", db.param),
                   (secrets.encrypt("b" * 40), Workspace.id.db_value(ws.id)))
    _inbound_secrets(db)
    n = factories.notification(ws, factories.email_payload())
    DeliveryAttempt.create(notification=n, number=1, outcome="delivered",
                           provider_message_id="pm-1", provider="postmark")
    body = {"RecordType": "Bounce", "ID": 1, "Type": "HardBounce", "MessageID": "pm-1",
            "Email": "ada@example.net"}
    url = f"/api/inbound/postmark/{ws.id}"
    for forged in ("c" * 40, _derived(ws.id), _derived(old_ws.id), ""):
        refused = client.post(url, json=body, auth=("herald", forged))
        assert refused.status_code in (401, 403) and NotificationEvent.select().count() == 0
    kept = client.post(url, json=body, auth=("herald", "b" * 40))
    assert kept.status_code == 200 and kept.json == {"recorded": True}
    assert NotificationEvent.get().kind == "bounced"
    # The workspace with no stored secret keeps the derived one its URL carried.
    derived = client.post(f"/api/inbound/postmark/{old_ws.id}?token={_derived(old_ws.id)}",
                          json=body)
    assert derived.status_code == 200 and derived.json == {"recorded": False}  # not its message
