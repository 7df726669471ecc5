from engine.database.migrations import MIGRATIONS, current_version, upgrade
from tests.conftest import ALL_MODELS


def test_upgrade_creates_every_table_and_is_idempotent(db):
    assert current_version(db) == len(MIGRATIONS)
    for model in ALL_MODELS:
        assert db.table_exists(model._meta.table_name), model.__name__
    again = upgrade(db)
    assert again == {"from": len(MIGRATIONS), "to": len(MIGRATIONS)}
    assert current_version(db) == len(MIGRATIONS)


def test_a_database_made_by_the_first_step_gets_the_lean_notification_indexes(tmp_path):
    """Step 2 on a database of step 1: the indexes every status update paid for are gone."""
    from peewee import SqliteDatabase

    from engine.database.db import database
    from engine.database.migrations import MIGRATIONS
    from engine.database.models import Notification

    old = SqliteDatabase(str(tmp_path / "old.sqlite3"))
    previous = database.obj
    database.initialize(old)
    try:
        MIGRATIONS[0](old)
        for name, columns, unique in (("notification_account_id", "account_id", False),
                                      ("notification_status", "status", False),
                                      ("notification_delivery_id", "delivery_id", True),
                                      ("notification_status_updated_at", "status, updated_at",
                                       False)):
            old.execute_sql(f"CREATE {'UNIQUE ' if unique else ''}INDEX IF NOT EXISTS {name} "
                            f"ON notification ({columns})")
        old.execute_sql("DROP INDEX IF EXISTS notification_unfinished")
        MIGRATIONS[1](old)
        names = {index.name for index in old.get_indexes(Notification._meta.table_name)
                 if not index.name.startswith("sqlite_autoindex")}  # the primary key
    finally:
        database.initialize(previous)
        old.close()
    # The workspace's index is the (workspace, created_at) one since step 7 (reports).
    assert names == {"notification_workspace_id_created_at", "notification_template_id",
                     "notification_account_id_created_at", "notification_unfinished"}


def test_suppressions_written_with_a_unicode_domain_take_its_ascii_key(db):
    """Step 3: rows keyed before keys carried the ASCII domain; a workspace that already
    has the ASCII key (a bounce) keeps that row alone."""
    from engine.database.migrations import MIGRATIONS
    from engine.database.models import Suppression
    from tests import factories

    one, two = factories.workspace(), factories.workspace()
    for ws, address in ((one, "ann@b\u00fccher.example"), (one, "bob@xn--bcher-kva.example"),
                        (one, "bob@b\u00fccher.example"), (two, "bob@b\u00fccher.example"),
                        (two, "+14155550100"), (two, "j\u00f6rg@example.net")):
        Suppression.create(workspace=ws, address=address)
    MIGRATIONS[2](db)
    rows = sorted((str(r.workspace_id) == str(one.id), r.address) for r in Suppression.select())
    assert rows == [(False, "+14155550100"), (False, "bob@xn--bcher-kva.example"),
                    (False, "j\u00f6rg@example.net"), (True, "ann@xn--bcher-kva.example"),
                    (True, "bob@xn--bcher-kva.example")]


def test_a_template_left_with_two_live_versions_keeps_the_newest(db):
    """Step 4: an older apply could leave two live versions; the newest stays live."""
    from engine.database.migrations import MIGRATIONS
    from engine.database.models import TemplateVersion
    from tests import factories

    ws = factories.workspace()
    doubled, _untouched = factories.template(ws), factories.template(ws)
    content = TemplateVersion.get(TemplateVersion.template == doubled).content
    for number, status in ((2, "live"), (3, "live"), (4, "draft")):
        TemplateVersion.create(template=doubled, number=number, status=status, content=content)
    MIGRATIONS[3](db)
    states = {(v.template_id == doubled.id, v.number): v.status
              for v in TemplateVersion.select()}
    assert states == {(True, 1): "previous", (True, 2): "previous", (True, 3): "live",
                      (True, 4): "draft", (False, 1): "live"}


def test_step_8_swaps_the_workspace_index_and_adds_the_attempt_provider(tmp_path):
    """A database of step 4 (the bare workspace index, no provider column) gets the reports'
    tables, the (workspace, created_at) index instead, and keeps its attempts."""
    from peewee import SqliteDatabase

    from engine.database.db import database
    from engine.database.models import DeliveryAttempt, Notification
    from engine.database.models.reports import ReportRollup

    old = SqliteDatabase(str(tmp_path / "old.sqlite3"), pragmas={"foreign_keys": 1})
    previous = database.obj
    database.initialize(old)
    try:
        MIGRATIONS[0](old)
        old.execute_sql("DROP INDEX notification_workspace_id_created_at")
        old.execute_sql("CREATE INDEX notification_workspace_id ON notification (workspace_id)")
        old.execute_sql("ALTER TABLE delivery_attempt DROP COLUMN provider")
        MIGRATIONS[7](old)
        names = {i.name for i in old.get_indexes(Notification._meta.table_name)}
        columns = {c.name for c in old.get_columns(DeliveryAttempt._meta.table_name)}
        assert old.table_exists(ReportRollup._meta.table_name)
        MIGRATIONS[7](old)  # idempotent
    finally:
        database.initialize(previous)
        old.close()
    assert "notification_workspace_id" not in names
    assert "notification_workspace_id_created_at" in names
    assert "provider" in columns


def test_a_database_made_before_idempotency_keys_gets_them_unique_per_workspace(settings,
                                                                               tmp_path):
    """The step on a notification table made before it: the two columns and the partial
    index."""
    import uuid

    import pytest
    from peewee import IntegrityError, SqliteDatabase

    from engine.database.db import database
    from engine.database.migrations import MIGRATIONS, _idempotency_keys
    from engine.database.models import SchemaVersion
    from tests import factories

    old = SqliteDatabase(str(tmp_path / "old.sqlite3"), pragmas={"foreign_keys": 1})
    previous = database.obj
    database.initialize(old)
    try:
        MIGRATIONS[0](old)
        for column in ("idempotency_key", "idempotency_digest"):
            old.execute_sql(f'ALTER TABLE "notification" DROP COLUMN "{column}"')
        before = MIGRATIONS.index(_idempotency_keys)
        for number in range(1, before + 1):
            SchemaVersion.create(version=number)
        assert upgrade(old) == {"from": before, "to": len(MIGRATIONS)}
        columns = {c.name for c in old.get_columns("notification")}
        indexes = {i.name: i for i in old.get_indexes("notification")}
        ws = factories.workspace()
        payload = factories.email_payload()
        for key in (None, None, "k"):  # rows without a key are not in the index
            factories.notification(ws, payload, idempotency_key=key)
        with pytest.raises(IntegrityError):
            factories.notification(ws, payload, id=uuid.uuid4(), idempotency_key="k")
        factories.notification(factories.workspace(), payload, idempotency_key="k")
    finally:
        database.initialize(previous)
        old.close()
    assert {"idempotency_key", "idempotency_digest"} <= columns
    assert indexes["notification_idempotency"].unique


def test_workspaces_made_before_retention_keep_everything_new_ones_keep_30_days(settings,
                                                                              tmp_path):
    """The retention step leaves an existing workspace's retention empty (kept forever
    until an Admin sets it: an upgrade deletes nothing), while a new workspace gets 30."""
    from peewee import SqliteDatabase

    from engine.database.db import database
    from engine.database.migrations import MIGRATIONS, _data_retention
    from engine.database.models import SchemaVersion, Workspace
    from engine.database.models.retention import PurgeMark
    from tests import factories

    old = SqliteDatabase(str(tmp_path / "old.sqlite3"), pragmas={"foreign_keys": 1})
    previous = database.obj
    database.initialize(old)
    try:
        MIGRATIONS[0](old)
        for column in ("retention_days", "hashed_suppressions"):
            old.execute_sql(f'ALTER TABLE "workspace" DROP COLUMN "{column}"')
        before = MIGRATIONS.index(_data_retention)
        for number in range(1, before + 1):
            SchemaVersion.create(version=number)
        account = factories.account()
        old.execute_sql('INSERT INTO "workspace" ("id", "account_id", "name", "signing_secret",'
                        ' "created_at") VALUES (?, ?, ?, ?, ?)',
                        ("0" * 31 + "1", Workspace.account.db_value(account.id), "Before",
                         Workspace.signing_secret.db_value("whsec_x"),
                         "2026-01-01"))
        assert upgrade(old) == {"from": before, "to": len(MIGRATIONS)}
        existing = Workspace.get(Workspace.name == "Before")
        made = factories.workspace(account)
        assert old.table_exists(PurgeMark._meta.table_name)
    finally:
        database.initialize(previous)
        old.close()
    assert existing.retention_days is None
    assert Workspace.retention_days.default == 30 and made.retention_days == 30
