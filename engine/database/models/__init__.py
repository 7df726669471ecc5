"""The data model: tenants, templates and their versions, keys, and what was sent. The
package's modules hold the other tables (people, reports, callbacks, partials, recipients,
retention, lists, the dev inbox); the migrations make them all (engine/database/migrations.py)."""

from __future__ import annotations

import datetime as dt
import uuid

from peewee import (
    SQL,
    AutoField,
    BooleanField,
    CharField,
    DateTimeField,
    ForeignKeyField,
    IntegerField,
    Model,
    TextField,
    UUIDField,
)

from engine.database import generations
from engine.database.db import database
from engine.database.fields import EncryptedField, JSONField
from engine.database.vocabulary import UNFINISHED, NotificationStatus, VersionStatus

PLANS = ("basic", "pro", "business")
# Sender verification allowances per plan (spec 8.3, docs/api.md): (domains, single senders).
SENDER_ALLOWANCES = {"basic": (1, 2), "pro": (3, 5), "business": (10, 10)}


def utcnow() -> dt.datetime:
    """Naive UTC: both databases store it the same way."""
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


class BaseModel(Model):
    class Meta:
        database = database
        legacy_table_names = False


class ChangesSeen(BaseModel):
    """A row the send path caches: saving or deleting it moves its scope's generation on at
    commit (engine/database/generations.py), so every process sees it at its next request.
    Query-level updates of these tables call ``generations.changed_*`` themselves."""

    def generation_scope(self) -> str:
        raise NotImplementedError

    def save(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        saved = super().save(*args, **kwargs)
        generations.changed(self.generation_scope())
        return saved

    def delete_instance(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        scope = self.generation_scope()
        deleted = super().delete_instance(*args, **kwargs)
        generations.changed(scope)
        return deleted


class Account(ChangesSeen):
    id = UUIDField(primary_key=True, default=uuid.uuid4)
    name = CharField(max_length=200, unique=True)
    plan = CharField(max_length=20, default="basic")
    monthly_limit = IntegerField(null=True)
    webhook_delivery = BooleanField(default=False)
    created_at = DateTimeField(default=utcnow)

    def generation_scope(self) -> str:
        return generations.account_scope(self.id)


class Workspace(ChangesSeen):
    id = UUIDField(primary_key=True, default=uuid.uuid4)
    account = ForeignKeyField(Account, backref="workspaces", on_delete="CASCADE")
    name = CharField(max_length=200)
    # JSON text {"plugin": ..., "url": ...}, encrypted because the URL holds credentials.
    email_provider = EncryptedField(null=True)
    signing_secret = EncryptedField()
    created_at = DateTimeField(default=utcnow)
    # Delivery callbacks (docs/callbacks.md): where outcomes are POSTed (null: nowhere), and
    # whether opens and clicks are among them (they are the bulk; null, as in a row written
    # by an older version: on).
    callback_url = TextField(null=True)
    callback_tracking = BooleanField(null=True, default=True)
    # Days a notification keeps its recipients and content (docs/operations.md, "Data
    # retention"); null, as in a workspace made before migration step 19: kept forever.
    retention_days = IntegerField(null=True, default=30)
    # Whether an erased address's suppression is kept here as a keyed hash: the claim
    # then checks the recipients' hashes too (engine/database/notification_store.py).
    hashed_suppressions = BooleanField(null=True, default=False)
    # The answer to an SMS recipient's HELP (docs/delivery.md, "SMS keywords"); null: none.
    sms_help_text = TextField(null=True)

    class Meta:
        indexes = ((("account", "name"), True),)

    def generation_scope(self) -> str:
        return generations.workspace_scope(self.id)


class Sender(ChangesSeen):
    """A domain or single address an account sends from, shared by every workspace (D9).

    ``herald apply`` declares senders verified (``declared``); the verification flow
    (engine/senders, docs/senders.md) verifies a domain by DNS and an address by a
    confirmation email. ``verified`` is what the send rule reads: true exactly when
    ``status`` is ``verified``.
    """

    id = UUIDField(primary_key=True, default=uuid.uuid4)
    account = ForeignKeyField(Account, backref="senders", on_delete="CASCADE")
    kind = CharField(max_length=10)  # domain | address
    value = CharField(max_length=320)  # lower-cased, the domain in its ASCII form
    verified = BooleanField(default=True)
    created_at = DateTimeField(default=utcnow)
    # Migration step 6: the verification flow.
    status = CharField(max_length=10, default="verified")  # pending|verified|failed|expired
    declared = BooleanField(default=True)  # by `herald apply`: verified, never checked
    workspace = ForeignKeyField(Workspace, null=True, backref="requested_senders",
                                on_delete="SET NULL")  # the workspace that asked
    records = JSONField(default=list)  # a domain's records as issued, with their last check
    dkim_keys = EncryptedField(null=True)  # JSON {selector: private key PEM}
    expires_at = DateTimeField(null=True)  # a request's end (7 days), a link's (48 hours)
    checked_at = DateTimeField(null=True)
    verified_at = DateTimeField(null=True)
    missing_since = DateTimeField(null=True)  # a verified domain's records found gone
    from_name = CharField(max_length=200, null=True)
    postal_address = TextField(null=True)
    token_hash = CharField(max_length=64, null=True)  # a confirmation link's token, hashed

    class Meta:
        indexes = ((("account", "kind", "value"), True),)

    def generation_scope(self) -> str:
        return generations.account_scope(self.account_id)


class Project(BaseModel):
    id = UUIDField(primary_key=True, default=uuid.uuid4)
    workspace = ForeignKeyField(Workspace, backref="projects", on_delete="CASCADE")
    name = CharField(max_length=200)
    defaults = JSONField(default=dict)

    class Meta:
        indexes = ((("workspace", "name"), True),)


class Container(BaseModel):
    """A folder inside a project; folders nest through ``parent``."""

    id = UUIDField(primary_key=True, default=uuid.uuid4)
    project = ForeignKeyField(Project, backref="containers", on_delete="CASCADE")
    parent = ForeignKeyField("self", null=True, backref="children", on_delete="CASCADE")
    name = CharField(max_length=200)
    defaults = JSONField(default=dict)


class Template(BaseModel):
    id = UUIDField(primary_key=True, default=uuid.uuid4)
    # Denormalised so the tenant check on send is one indexed lookup.
    workspace = ForeignKeyField(Workspace, backref="templates", on_delete="CASCADE")
    project = ForeignKeyField(Project, backref="templates", on_delete="CASCADE")
    container = ForeignKeyField(Container, null=True, backref="templates", on_delete="CASCADE")
    name = CharField(max_length=200)
    channel = CharField(max_length=10)
    defaults = JSONField(default=dict)
    created_at = DateTimeField(default=utcnow)


class TemplateVersion(BaseModel):
    id = UUIDField(primary_key=True, default=uuid.uuid4)
    template = ForeignKeyField(Template, backref="versions", on_delete="CASCADE")
    number = IntegerField()
    status = CharField(max_length=10, default=VersionStatus.DRAFT)
    locked = BooleanField(default=False)
    # The channel's content fields (each channel declares them: channels/).
    content = JSONField(default=dict)
    # Compiled template code stored at publish (engine.rendering.compile_parts).
    compiled = TextField(null=True)
    created_at = DateTimeField(default=utcnow)
    published_at = DateTimeField(null=True)
    # The editor (engine/authoring/drafts.py): a draft's revision counts its saves, so a save
    # made from an older revision (another tab) is refused rather than silently overwriting.
    revision = IntegerField(default=0, constraints=[SQL("DEFAULT 0")])
    edited_at = DateTimeField(null=True)
    edited_by = CharField(max_length=320, null=True)  # who saved last (an email)
    published_by = CharField(max_length=320, null=True)  # null: by `herald` or `apply`

    class Meta:
        indexes = ((("template", "number"), True),)


class TemplateSample(BaseModel):
    """The sample tag values last previewed with a template in the editor, for the next
    person to edit it (engine/authoring/samples.py); not content, never exported."""

    template = ForeignKeyField(Template, primary_key=True, backref="+", on_delete="CASCADE")
    tags = JSONField(default=dict)
    updated_at = DateTimeField(default=utcnow)


class ApiKey(BaseModel):
    """Only the hash of a key is stored; the value is shown once at creation."""

    id = UUIDField(primary_key=True, default=uuid.uuid4)
    workspace = ForeignKeyField(Workspace, backref="api_keys", on_delete="CASCADE")
    name = CharField(max_length=200)
    key_hash = CharField(max_length=64, unique=True)
    created_at = DateTimeField(default=utcnow)
    last_used_at = DateTimeField(null=True)
    expires_at = DateTimeField(null=True)
    revoked_at = DateTimeField(null=True)

    class Meta:
        indexes = ((("workspace", "name"), True),)

    def status_at(self, now: dt.datetime | None = None) -> str:
        return key_status(self.revoked_at, self.expires_at, now)


def key_status(revoked_at: dt.datetime | None, expires_at: dt.datetime | None,
               now: dt.datetime | None = None) -> str:
    """active, revoked or expired: derived, never stored, so it cannot go stale."""
    if revoked_at is not None:
        return "revoked"
    if expires_at is not None and expires_at <= (now or utcnow()):
        return "expired"
    return "active"


class Suppression(BaseModel):
    id = UUIDField(primary_key=True, default=uuid.uuid4)
    workspace = ForeignKeyField(Workspace, backref="suppressions", on_delete="CASCADE")
    address = CharField(max_length=320)  # lower-cased
    reason = CharField(max_length=40, default="manual")
    # all: every message; marketing: Marketing email only (vocabulary.SuppressionScope);
    # topic:NAME: Marketing email of that topic. One row per address and scope.
    scope = CharField(max_length=80, default="all")
    created_at = DateTimeField(default=utcnow)

    class Meta:
        indexes = ((("workspace", "address", "scope"), True),)


class Notification(BaseModel):
    """One accepted send; committed before its RQ job is enqueued (job id = this id)."""

    id = UUIDField(primary_key=True, default=uuid.uuid4)
    # Every index here is maintained by each of the two status updates of a delivery (they
    # cannot be HOT updates), so there is none that another one already covers.
    account = ForeignKeyField(Account, on_delete="CASCADE", index=False)  # (account, created_at)
    # (workspace, created_at): the reports' feed and counts, and the workspace's own lookups.
    workspace = ForeignKeyField(Workspace, backref="notifications", on_delete="CASCADE",
                                index=False)
    template = ForeignKeyField(Template, null=True, on_delete="SET NULL")
    version_number = IntegerField()
    channel = CharField(max_length=10)
    status = CharField(max_length=12, default=NotificationStatus.QUEUED)  # UNFINISHED_INDEX
    is_test = BooleanField(default=False)
    correlation_id = CharField(max_length=64)
    delivery_id = CharField(max_length=64)  # a uuid4, never looked up
    # Rendered content and delivery options: exactly what the worker will send.
    payload = JSONField(default=dict)
    attempts = IntegerField(default=0)
    next_attempt_at = DateTimeField(null=True)
    last_error = TextField(null=True)
    created_at = DateTimeField(default=utcnow)
    updated_at = DateTimeField(default=utcnow)
    # The send's Idempotency-Key and its body's digest (engine/sending/idempotency.py).
    idempotency_key = CharField(max_length=255, null=True)
    idempotency_digest = CharField(max_length=64, null=True)

    class Meta:
        indexes = ((("account", "created_at"), False), (("workspace", "created_at"), False))


# The reconciler's queries: only rows still to deliver are in it, so an outcome (sending to
# delivered or failed) adds no entry, and the index stays as small as the backlog.
UNFINISHED_INDEX = Notification.index(
    Notification.status, Notification.updated_at, name="notification_unfinished",
    where=Notification.status.in_([str(status) for status in UNFINISHED]))
Notification.add_index(UNFINISHED_INDEX)
# One notification per workspace and Idempotency-Key, whatever Redis remembers; rows sent
# without a key are not in it. Made by its migration step only (not in the model's indexes,
# which released steps create with the columns of their own time).
# `herald notifications show CORRELATION_ID` (docs/operations.md): one lookup by the id a
# caller holds, across workspaces. Made by its migration step only, like the one below.
CORRELATION_INDEX = Notification.index(Notification.correlation_id,
                                       name="notification_correlation_id")
IDEMPOTENCY_INDEX = Notification.index(
    Notification.workspace, Notification.idempotency_key, unique=True,
    name="notification_idempotency", where=Notification.idempotency_key.is_null(False))


class DeliveryAttempt(BaseModel):
    id = AutoField()
    notification = ForeignKeyField(Notification, backref="delivery_attempts", on_delete="CASCADE")
    number = IntegerField()
    recipient = CharField(max_length=320, null=True)  # set when a message went to one address
    started_at = DateTimeField(default=utcnow)
    duration_ms = IntegerField(default=0)
    outcome = CharField(max_length=12)  # an Outcome (engine/database/vocabulary.py)
    status_code = IntegerField(null=True)
    # Indexed: a provider's webhook names its message by this id (engine/inbound/matching.py).
    provider_message_id = CharField(max_length=200, null=True, index=True)
    response_excerpt = TextField(null=True)
    error = TextField(null=True)
    provider = CharField(max_length=40, null=True)  # the provider's scheme: smtp, postmark...
    # With a list of providers (failover): the one that took the message, and each one
    # tried in order with its outcome ({"provider", "outcome", "error"}); null with one.
    delivered_via = CharField(max_length=300, null=True)
    providers_tried = JSONField(null=True)


class TrackingEvent(BaseModel):
    """An open, click or unsubscribe recorded from a signed URL."""

    id = AutoField()
    notification = ForeignKeyField(Notification, backref="events", on_delete="CASCADE")
    kind = CharField(max_length=12)
    recipient = CharField(max_length=320, null=True)
    url = TextField(null=True)
    created_at = DateTimeField(default=utcnow)


class SchemaVersion(BaseModel):
    id = AutoField()
    version = IntegerField()
    applied_at = DateTimeField(default=utcnow)
