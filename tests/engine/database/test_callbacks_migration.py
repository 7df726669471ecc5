"""The delivery callbacks' migration step on a database made before it: the workspace gets
its callback columns (existing rows: no URL, opens and clicks on), the callback table is
made, and the step runs again harmlessly."""

from __future__ import annotations

import uuid

from engine.callbacks import targets
from engine.database.migrations import MIGRATIONS, _delivery_callbacks, upgrade
from engine.database.models import Workspace
from engine.database.models.callbacks import Callback
from tests import factories
from tests.support.old_schema import database_before


def test_the_step_adds_the_callback_columns_and_table(settings, tmp_path):
    with database_before(_delivery_callbacks, tmp_path,
                         'ALTER TABLE "workspace" DROP COLUMN "callback_url"',
                         'ALTER TABLE "workspace" DROP COLUMN "callback_tracking"') as old:
        account = factories.account()
        old.execute_sql('INSERT INTO "workspace" ("id", "account_id", "name", "signing_secret", '
                        '"created_at") VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)',
                        (Workspace.id.db_value(uuid.uuid4()),
                         Workspace.account.db_value(account.id), "before",
                         Workspace.signing_secret.db_value("whsec_x")))
        before = MIGRATIONS.index(_delivery_callbacks)
        assert upgrade(old) == {"from": before, "to": len(MIGRATIONS)}
        ws = Workspace.get(Workspace.name == "before")
        assert ws.callback_url is None and targets.target(ws.id) is None
        ws.callback_url = "https://hook.example.com/cb"
        ws.save()
        targets.forget(ws.id)
        assert targets.target(ws.id).tracking  # an older row: opens and clicks on
        assert Callback.select().count() == 0
        _delivery_callbacks(old)  # idempotent
