"""The migration step that gives each suppression its scope, on a database made before it."""

from __future__ import annotations

import uuid

import pytest

from engine.database.migrations import MIGRATIONS, _suppression_scope, upgrade
from engine.database.models import Suppression
from tests import factories
from tests.support.old_schema import database_before


@pytest.fixture
def old(settings, tmp_path):
    """A database of the step before: the suppression table without its scope column."""
    with database_before(_suppression_scope, tmp_path,
                         'DROP INDEX "suppression_workspace_id_address_scope"',
                         'ALTER TABLE "suppression" DROP COLUMN "scope"',
                         'CREATE UNIQUE INDEX "suppression_workspace_id_address" '
                         'ON "suppression" ("workspace_id", "address")') as old:
        yield old


def test_existing_rows_keep_their_meaning(old):
    ws = factories.workspace()
    for address, reason in (("u@example.net", "unsubscribe"), ("b@example.net", "bounce"),
                            ("c@example.net", "complaint"), ("m@example.net", "manual"),
                            ("s@example.net", "soft-bounces")):
        old.execute_sql('INSERT INTO "suppression" ("id", "workspace_id", "address", "reason", '
                        '"created_at") VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)',
                        (uuid.uuid4().hex, Suppression.workspace.db_value(ws.id), address,
                         reason))
    before = MIGRATIONS.index(_suppression_scope)
    assert upgrade(old) == {"from": before, "to": len(MIGRATIONS)}
    scopes = {r.address: r.scope for r in Suppression.select()}
    assert scopes == {"u@example.net": "marketing", "b@example.net": "all",
                      "c@example.net": "all", "m@example.net": "all",
                      "s@example.net": "all"}
    # A row written after the step without naming a scope stops every message.
    Suppression.create(workspace=ws, address="new@example.net")
    assert Suppression.get(Suppression.address == "new@example.net").scope == "all"
    _suppression_scope(old)  # idempotent
    assert Suppression.select().where(Suppression.scope == "marketing").count() == 1
