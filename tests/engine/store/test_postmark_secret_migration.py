"""Migration step 14, the stored Postmark webhook secret, on a database made before it:
existing workspaces keep an empty column (their derived secret stays valid), new ones get
a random secret, encrypted at rest."""

from __future__ import annotations

import uuid

import pytest

from engine.inbound import postmark
from engine.store.migrations import MIGRATIONS, _postmark_secrets, upgrade
from engine.store.models import Workspace
from tests import factories
from tests.support.old_schema import database_before


@pytest.fixture
def old(settings, tmp_path):
    """A database of step 13: the workspace table without its postmark_secret column."""
    with database_before(_postmark_secrets, tmp_path,
                         'ALTER TABLE "workspace" DROP COLUMN "postmark_secret"') as old:
        yield old


def test_step_14_keeps_existing_workspaces_on_their_derived_secret(old):
    assert MIGRATIONS.index(_postmark_secrets) + 1 == 14
    account = factories.account()
    old.execute_sql('INSERT INTO "workspace" ("id", "account_id", "name", "signing_secret", '
                    '"created_at") VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)',
                    (Workspace.id.db_value(uuid.uuid4()), Workspace.account.db_value(account.id),
                     "before", Workspace.signing_secret.db_value("whsec_x")))
    assert upgrade(old) == {"from": 13, "to": len(MIGRATIONS)}
    before = Workspace.get(Workspace.name == "before")
    assert before.postmark_secret is None
    assert postmark.secret(before.id) == postmark.derived_secret(before.id)
    made = factories.workspace(account)
    (raw,) = old.execute_sql('SELECT "postmark_secret" FROM "workspace" WHERE "id" = ?',
                             (Workspace.id.db_value(made.id),)).fetchone()
    assert raw.startswith("enc:v1:")
    assert postmark.secret(made.id) == Workspace.get_by_id(made.id).postmark_secret != \
        postmark.derived_secret(made.id)
    _postmark_secrets(old)  # idempotent
