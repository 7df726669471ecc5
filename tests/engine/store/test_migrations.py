from engine.store.migrations import MIGRATIONS, current_version, upgrade
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

    from engine.store.db import database
    from engine.store.migrations import MIGRATIONS
    from engine.store.models import Notification

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
    from engine.store.migrations import MIGRATIONS
    from engine.store.models import Suppression
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
    from engine.store.migrations import MIGRATIONS
    from engine.store.models import TemplateVersion
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


def test_step_7_swaps_the_workspace_index_and_adds_the_attempt_provider(tmp_path):
    """A database of step 4 (the bare workspace index, no provider column) gets the reports'
    tables, the (workspace, created_at) index instead, and keeps its attempts."""
    from peewee import SqliteDatabase

    from engine.store.db import database
    from engine.store.models import DeliveryAttempt, Notification
    from engine.store.report_models import ReportRollup

    old = SqliteDatabase(str(tmp_path / "old.sqlite3"), pragmas={"foreign_keys": 1})
    previous = database.obj
    database.initialize(old)
    try:
        MIGRATIONS[0](old)
        old.execute_sql("DROP INDEX notification_workspace_id_created_at")
        old.execute_sql("CREATE INDEX notification_workspace_id ON notification (workspace_id)")
        old.execute_sql("ALTER TABLE delivery_attempt DROP COLUMN provider")
        MIGRATIONS[6](old)
        names = {i.name for i in old.get_indexes(Notification._meta.table_name)}
        columns = {c.name for c in old.get_columns(DeliveryAttempt._meta.table_name)}
        assert old.table_exists(ReportRollup._meta.table_name)
        MIGRATIONS[6](old)  # idempotent
    finally:
        database.initialize(previous)
        old.close()
    assert "notification_workspace_id" not in names
    assert "notification_workspace_id_created_at" in names
    assert "provider" in columns
