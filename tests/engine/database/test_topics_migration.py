"""The migration step for topics and replies, on a database made before it: its rows kept,
and an address may then have a suppression per scope."""

from __future__ import annotations

import pytest

from engine.catalog import suppressions
from engine.database.migrations import MIGRATIONS, _topics_and_replies, upgrade
from engine.database.models import Suppression, Workspace
from engine.database.models.recipients import Topic
from tests import factories
from tests.support.old_schema import database_before


@pytest.fixture
def old(settings, tmp_path):
    """A database of the step before: one suppression per address, no topics."""
    with database_before(_topics_and_replies, tmp_path,
                         'ALTER TABLE "workspace" DROP COLUMN "sms_help_text"',
                         'DROP INDEX "suppression_workspace_id_address_scope"',
                         'CREATE UNIQUE INDEX "suppression_workspace_id_address" '
                         'ON "suppression" ("workspace_id", "address")') as old:
        yield old


def test_rows_are_kept_and_an_address_may_leave_several_topics(old):
    ws = factories.workspace()
    suppressions.add(ws.id, ["ada@example.net"], "unsubscribe")
    before = MIGRATIONS.index(_topics_and_replies)
    assert upgrade(old) == {"from": before, "to": len(MIGRATIONS)}
    assert [(r.address, r.scope) for r in Suppression.select()] == [("ada@example.net",
                                                                     "marketing")]
    Topic.create(workspace=ws, name="news")
    assert Workspace.get_by_id(ws.id).sms_help_text is None
    assert suppressions.add(ws.id, ["bob@example.net"], "unsubscribe", "topic:news") == 1
    assert suppressions.add(ws.id, ["bob@example.net"], "unsubscribe", "topic:product") == 1
    assert suppressions.add(ws.id, ["bob@example.net"], "bounce") == 1
    assert sorted(r.scope for r in Suppression.select().where(
        Suppression.address == "bob@example.net")) == ["all", "topic:news", "topic:product"]
    _topics_and_replies(old)  # idempotent
