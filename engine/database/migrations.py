"""Schema migrations: an ordered list of steps, each applied once, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable

from peewee import Database, SqliteDatabase, TextField, Value, fn
from playhouse.migrate import SchemaMigrator, migrate

from engine.database import partitions
from engine.database.models import (
    CORRELATION_INDEX,
    IDEMPOTENCY_INDEX,
    DeliveryAttempt,
    Notification,
    SchemaVersion,
    Sender,
    Suppression,
    TemplateSample,
    TemplateVersion,
    Workspace,
    utcnow,
)
from engine.database.models.inbox import CaughtWebhook
from engine.database.models.initial import ALL_MODELS
from engine.database.models.lists import RecipientList


def _initial(db: Database) -> None:
    db.create_tables(ALL_MODELS, safe=True)


def _leaner_notification_indexes(db: Database) -> None:
    """Indexes every status update had to maintain for nothing: two covered by another index,
    one on a random id never looked up; the reconciler's index only holds unfinished rows."""
    for name in ("notification_account_id", "notification_status", "notification_delivery_id",
                 "notification_status_updated_at"):
        db.execute_sql(f'DROP INDEX IF EXISTS "{name}"')
    Notification._schema.create_indexes(safe=True)


def _suppressions_by_ascii_domain(db: Database) -> None:
    """Suppression keys now carry an internationalised domain in its ASCII form (the one
    mail is sent to): rows written with the Unicode form take that key, and where the
    workspace already has it (a bounce recorded as ``xn--...``) the older row goes."""
    from engine.formats.addresses import suppression_key

    rows = Suppression.select(Suppression.id, Suppression.workspace, Suppression.address)
    changed = [(id_, workspace, key) for id_, workspace, address in rows.tuples().iterator()
               if (key := suppression_key(address)) != address]
    for id_, workspace, key in changed:
        if Suppression.select().where(Suppression.workspace == workspace,
                                      Suppression.address == key).exists():
            Suppression.delete().where(Suppression.id == id_).execute()
        else:
            Suppression.update(address=key).where(Suppression.id == id_).execute()


def _one_live_version(db: Database) -> None:
    """An apply could leave a template two live versions (fixed since): the newest stays
    live, as the file format reads it ("the last published is live"), the others previous."""
    doubled = (TemplateVersion.select(TemplateVersion.template)
               .where(TemplateVersion.status == "live").group_by(TemplateVersion.template)
               .having(fn.COUNT(TemplateVersion.id) > 1))
    for (template_id,) in list(doubled.tuples()):
        newest = (TemplateVersion.select(fn.MAX(TemplateVersion.number))
                  .where(TemplateVersion.template == template_id,
                         TemplateVersion.status == "live").scalar())
        TemplateVersion.update(status="previous").where(
            TemplateVersion.template == template_id, TemplateVersion.status == "live",
            TemplateVersion.number != newest).execute()


def _people(db: Database) -> None:
    """The web application's users, memberships, invitations, resets, sessions, audit log."""
    from engine.database.models.people import PEOPLE_MODELS

    db.create_tables(PEOPLE_MODELS, safe=True)


def _sender_verification(db: Database) -> None:
    """The sender verification flow's columns (docs/senders.md), added where missing (a
    database made by step 1 since has them); a domain is kept in its ASCII form, the one
    mail is sent from (an address's too), so both spellings of an internationalised domain
    find it."""
    from playhouse.migrate import PostgresqlMigrator, SqliteMigrator, migrate

    from engine.formats.addresses import ascii_form, suppression_key

    have = {column.name for column in db.get_columns(Sender._meta.table_name)}
    migrator = (SqliteMigrator(db) if isinstance(db, SqliteDatabase)
                else PostgresqlMigrator(db))
    wanted = [(name, field) for name, field in Sender._meta.fields.items()
              if field.column_name not in have]
    migrate(*(migrator.add_column(Sender._meta.table_name, field.column_name, field)
              for _, field in wanted))
    rows = Sender.select(Sender.id, Sender.account, Sender.kind, Sender.value)
    for row in list(rows):
        ascii_value = (ascii_form(row.value).lower() if row.kind == "domain"
                       else suppression_key(row.value))
        if ascii_value == row.value:
            continue
        if Sender.select().where(Sender.account == row.account_id, Sender.kind == row.kind,
                                 Sender.value == ascii_value).exists():
            Sender.delete().where(Sender.id == row.id).execute()
        else:
            Sender.update(value=ascii_value).where(Sender.id == row.id).execute()


def _authoring(db: Database) -> None:
    """The editor: a draft's revision and who saved and published each version (columns of
    template_version, made by step 1 on a new database), and the remembered sample tags."""
    from playhouse.migrate import PostgresqlMigrator, SqliteMigrator, migrate

    table = TemplateVersion._meta.table_name
    have = {column.name for column in db.get_columns(table)}
    migrator = (SqliteMigrator(db) if isinstance(db, SqliteDatabase)
                else PostgresqlMigrator(db))
    fields = TemplateVersion._meta.fields
    migrate(*(migrator.add_column(table, fields[name].column_name, fields[name])
              for name in ("revision", "edited_at", "edited_by", "published_by")
              if fields[name].column_name not in have))
    db.create_tables([TemplateSample], safe=True)


def _delivery_reports(db: Database) -> None:
    """Reports (docs/reports.md): provider events, the lookup index, daily rollups, each
    attempt's provider; the workspace's notifications indexed by time instead of the bare
    workspace key (one index either way, so a send or an outcome maintains no more)."""
    from playhouse.migrate import PostgresqlMigrator, SqliteMigrator, migrate

    from engine.database.models import DeliveryAttempt
    from engine.database.models.reports import (
        NotificationEvent,
        NotificationLookup,
        ReportCursor,
        ReportDay,
        ReportRollup,
    )

    db.create_tables([NotificationEvent, NotificationLookup, ReportDay, ReportRollup,
                      ReportCursor], safe=True)
    columns = {c.name for c in db.get_columns(DeliveryAttempt._meta.table_name)}
    if "provider" not in columns:
        migrator = (SqliteMigrator if isinstance(db, SqliteDatabase) else PostgresqlMigrator)(db)
        migrate(migrator.add_column(DeliveryAttempt._meta.table_name, "provider",
                                    DeliveryAttempt.provider))
    db.execute_sql('DROP INDEX IF EXISTS "notification_workspace_id"')
    Notification._schema.create_indexes(safe=True)
    DeliveryAttempt._schema.create_indexes(safe=True)


def add_missing_columns(db: Database, model: type, *names: str) -> None:
    """ADD COLUMN for each (nullable) field not in the table yet: a database made by step 1
    with a newer model already has them."""
    table = model._meta.table_name
    present = {column.name for column in db.get_columns(table)}
    migrator = SchemaMigrator.from_database(db)
    for name in names:
        field = model._meta.fields[name]
        if field.column_name not in present:
            migrate(migrator.add_column(table, field.column_name, field))


def _idempotency_keys(db: Database) -> None:
    """A send's Idempotency-Key and body digest on its row, unique per workspace."""
    add_missing_columns(db, Notification, "idempotency_key", "idempotency_digest")
    db.execute(Notification._schema._create_index(IDEMPOTENCY_INDEX, safe=True))


def _failover_attempt_columns(db: Database) -> None:
    """Which provider of a failover list delivered an attempt, and which were tried."""
    add_missing_columns(db, DeliveryAttempt, "delivered_via", "providers_tried")


def _webhook_catcher(db: Database) -> None:
    """What the dev inbox's webhook catcher received."""
    db.create_tables([CaughtWebhook], safe=True)


def _suppression_scope(db: Database) -> None:
    """Each suppression's scope (docs/delivery.md, "Suppression scope"). Existing rows keep
    their meaning as far as it can be read from their reason: an unsubscribe, written by a
    Marketing email's one-click link, stops Marketing email only; every other reason (a
    bounce, a complaint, soft bounces, a manual or imported entry) every message."""
    from engine.database.vocabulary import MARKETING_ONLY_REASONS, SuppressionScope

    add_missing_columns(db, Suppression, "scope")
    Suppression.update(scope=SuppressionScope.MARKETING).where(
        Suppression.reason.in_(MARKETING_ONLY_REASONS)).execute()


def _correlation_id_index(db: Database) -> None:
    """Notifications by correlation id (`herald notifications show`). A database that has
    one already (made by hand: any index whose first column is correlation_id) keeps it, and
    gets no second one for every write to maintain."""
    table = Notification._meta.table_name
    if any(index.columns and index.columns[0] == "correlation_id"
           for index in db.get_indexes(table)):
        return
    db.execute(Notification._schema._create_index(CORRELATION_INDEX, safe=True))


def _postmark_secrets(db: Database) -> None:
    """Each workspace's own Postmark webhook secret, so it can be rotated. Existing rows keep
    the column empty: until their first rotation the value derived from HERALD_SECRET_KEY
    (what `herald inbound postmark-url` printed before) still opens their URL, so a webhook
    set up in Postmark keeps working across the upgrade (docs/reports.md). Step 25 copies
    them into the inbound secrets; the column is no longer read, so it is declared here."""
    table = Workspace._meta.table_name
    if "postmark_secret" not in {column.name for column in db.get_columns(table)}:
        migrator = SchemaMigrator.from_database(db)
        migrate(migrator.add_column(table, "postmark_secret", TextField(null=True)))


def _trustworthy_accounts(db: Database) -> None:
    """Two-factor sign-in (a user's TOTP secret, recovery codes, a workspace's requirement)
    and sessions a person can see (browser, last use): docs/web.md, "Security"."""
    from engine.database.models.people import PEOPLE_MODELS, WebSession

    # Every people table, the new ones included, where missing (a database whose step 5
    # is recorded but whose tables were made another way), then the new columns.
    db.create_tables(PEOPLE_MODELS, safe=True)
    add_missing_columns(db, WebSession, "last_seen_at", "user_agent")


def _recipient_lists(db: Database) -> None:
    """Uploaded lists of recipients, checked and then sent as one job (docs/web.md)."""
    db.create_tables([RecipientList], safe=True)


def _delivery_callbacks(db: Database) -> None:
    """Delivery callbacks (docs/callbacks.md): a workspace's callback URL and its switch
    for opens and clicks, and the callbacks to send with their latest attempt."""
    from engine.database.models.callbacks import CALLBACK_MODELS

    add_missing_columns(db, Workspace, "callback_url", "callback_tracking")
    db.create_tables(list(CALLBACK_MODELS), safe=True)


def _lz4_payloads(db: Database) -> None:
    """A notification's payload (about 2 KB on every row, more than PostgreSQL keeps
    inline) compressed with lz4 instead of pglz, where the server has it (PostgreSQL 14 and
    later, built with lz4): 5-10 µs less of the database's CPU a row written and about 2 µs
    a row read (docs/performance.md, "Measurements behind the code's shape"). A metadata
    change: rows written before keep pglz and read as before. SQLite compresses nothing."""
    if isinstance(db, SqliteDatabase):
        return
    has_lz4 = db.execute_sql("SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression'"
                             " AND 'lz4' = ANY(enumvals)").fetchone()
    if has_lz4:
        db.execute_sql('ALTER TABLE "notification" ALTER COLUMN "payload" SET COMPRESSION lz4')


def _data_retention(db: Database) -> None:
    """Retention and erasure (docs/operations.md, "Data retention"): each workspace's
    retention, null for the workspaces that exist now (kept forever until an Admin sets
    it: an upgrade deletes nothing by itself), and where its purge has reached."""
    from engine.database.models.retention import RETENTION_MODELS

    add_missing_columns(db, Workspace, "retention_days", "hashed_suppressions")
    db.create_tables(list(RETENTION_MODELS), safe=True)


def _list_schedules(db: Database) -> None:
    """A list's schedule, its recipients' time zones, its check off the request thread and
    the notifications its cancel stopped (docs/web.md, "Send to a list")."""
    add_missing_columns(db, RecipientList, "cancelled", "scheduled_for", "time_zone",
                        "problem", "problems", "late_rows", "resume_at")


def _partials(db: Database) -> None:
    """Partials (docs/rendering.md): a workspace's shared template pieces and their
    versions. Language variants and `inlineCss` live in a version's content (JSON)."""
    from engine.database.models.partials import PARTIAL_MODELS

    db.create_tables(list(PARTIAL_MODELS), safe=True)


def _passkeys_and_single_sign_on(db: Database) -> None:
    """Passkeys and single sign-on identities (docs/web.md, "Security decisions")."""
    from engine.database.models.people import SIGN_IN_MODELS

    db.create_tables(list(SIGN_IN_MODELS), safe=True)


def _topics_and_replies(db: Database) -> None:
    """Topics and what recipients say (docs/delivery.md, "Topics", "SMS keywords"): the
    workspace's topics and inbound SMS, its HELP answer, and a suppression per address and
    scope (an address may leave several topics), its scope long enough for ``topic:NAME``."""
    from engine.database.models.recipients import RECIPIENT_MODELS

    db.create_tables(list(RECIPIENT_MODELS), safe=True)
    add_missing_columns(db, Workspace, "sms_help_text")
    if not isinstance(db, SqliteDatabase):  # SQLite does not enforce a varchar's length
        db.execute_sql('ALTER TABLE "suppression" ALTER COLUMN "scope" TYPE VARCHAR(80)')
    db.execute_sql('DROP INDEX IF EXISTS "suppression_workspace_id_address"')
    Suppression._schema.create_indexes(safe=True)


def _session_addresses(db: Database) -> None:
    """The client address a web session signed in from, for the Account page."""
    from engine.database.models.people import PEOPLE_MODELS, WebSession

    # Where a database's people tables were made another way, made now (as step 5 does).
    db.create_tables(PEOPLE_MODELS, safe=True)
    add_missing_columns(db, WebSession, "ip")


def _inbound_secrets(db: Database) -> None:
    """One inbound secret per workspace and provider (docs/reports.md, "Provider events"),
    the Postmark ones copied in: each workspace's stored secret as it is (still sealed), or
    the one derived from HERALD_SECRET_KEY where none was stored, so the URL Postmark
    already has records every event across the upgrade. The old column stays, unread: a
    process of the previous release still running meanwhile selects it."""
    from engine.database import secrets
    from engine.database.models.inbound import INBOUND_MODELS, InboundSecret

    db.create_tables(list(INBOUND_MODELS), safe=True)
    table = Workspace._meta.table_name
    if "postmark_secret" not in {column.name for column in db.get_columns(table)}:
        return  # a schema made without it has no Postmark secret to keep
    have = {workspace for (workspace,) in InboundSecret.select(InboundSecret.workspace)
            .where(InboundSecret.provider == "postmark").tuples()}
    rows = db.execute_sql(f'SELECT "id", "postmark_secret" FROM "{table}"').fetchall()
    for raw_id, sealed in rows:
        workspace_id = Workspace.id.python_value(raw_id)
        if workspace_id in have:
            continue
        secret = Value(sealed, converter=False) if sealed else \
            secrets.keyed_digest(f"herald postmark webhook {str(workspace_id).lower()}")
        InboundSecret.insert(workspace=workspace_id, provider="postmark", secret=secret,
                             created_at=utcnow()).execute()


def _monthly_partitions(db: Database) -> None:
    """On PostgreSQL, the notification and attempt tables partitioned by month
    (engine/database/partitions.py): this step makes the triggers' functions; the conversion
    itself runs right after the upgrade's transaction, in short transactions of its own
    (``upgrade`` below), and goes on at the next upgrade if it was interrupted. SQLite keeps
    one table each."""
    if partitions.supported(db):
        partitions.create_functions(db)


# Append new steps; never edit a released one. Each runs inside one transaction.
MIGRATIONS: list[Callable[[Database], None]] = [_initial, _leaner_notification_indexes,
                                                _suppressions_by_ascii_domain,
                                                _one_live_version, _people,
                                                _sender_verification, _authoring,
                                                _delivery_reports, _idempotency_keys,
                                                _failover_attempt_columns, _webhook_catcher,
                                                _suppression_scope, _correlation_id_index,
                                                _postmark_secrets, _recipient_lists,
                                                _trustworthy_accounts, _delivery_callbacks,
                                                _lz4_payloads, _data_retention,
                                                _list_schedules, _partials,
                                                _passkeys_and_single_sign_on,
                                                _topics_and_replies, _session_addresses,
                                                _inbound_secrets, _monthly_partitions]


def current_version(db: Database) -> int:
    if not db.table_exists(SchemaVersion._meta.table_name):
        return 0
    row = SchemaVersion.select(SchemaVersion.version).order_by(SchemaVersion.version.desc()).first()
    return row.version if row else 0


_LOCK_ID = 0x4E52414C44  # any constant: serialises concurrent upgrades on PostgreSQL


def upgrade(db: Database) -> dict[str, int]:
    """Apply the steps not yet applied; running it again (or twice at once) is a no-op."""
    postgres = not isinstance(db, SqliteDatabase)
    with db.atomic():
        if postgres:
            db.execute_sql("SELECT pg_advisory_xact_lock(%s)", (_LOCK_ID,))
        before = current_version(db)
        for number, step in enumerate(MIGRATIONS, start=1):
            if number > before:
                step(db)
                SchemaVersion.create(version=number)
    if postgres:
        _partition(db)
    return {"from": before, "to": len(MIGRATIONS)}


def _partition(db: Database) -> None:
    """The partitioning conversion, outside any transaction so that each of its steps
    commits on its own; one upgrade at a time (a session-level lock)."""
    db.execute_sql("SELECT pg_advisory_lock(%s)", (_LOCK_ID,))
    try:
        partitions.convert(db)
    finally:
        db.execute_sql("SELECT pg_advisory_unlock(%s)", (_LOCK_ID,))
