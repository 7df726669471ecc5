"""Tables of the people package (created by migration step 5)."""

from __future__ import annotations

import uuid

from peewee import (
    AutoField,
    BigIntegerField,
    BlobField,
    CharField,
    DateTimeField,
    ForeignKeyField,
    TextField,
    UUIDField,
)

from engine.database.fields import EncryptedField, JSONField
from engine.database.models import BaseModel, Workspace, utcnow

ROLES = ("owner", "admin", "member")


class User(BaseModel):
    """A person who signs in to the web application; ``email`` is kept lower-cased."""

    id = UUIDField(primary_key=True, default=uuid.uuid4)
    email = CharField(max_length=320, unique=True)
    name = CharField(max_length=200)
    password_hash = TextField()
    created_at = DateTimeField(default=utcnow)
    password_changed_at = DateTimeField(default=utcnow)


class Membership(BaseModel):
    id = UUIDField(primary_key=True, default=uuid.uuid4)
    workspace = ForeignKeyField(Workspace, backref="memberships", on_delete="CASCADE")
    user = ForeignKeyField(User, backref="memberships", on_delete="CASCADE")
    role = CharField(max_length=10)  # owner | admin | member
    created_at = DateTimeField(default=utcnow)

    class Meta:
        indexes = ((("workspace", "user"), True),)


class Invitation(BaseModel):
    """A one-time link to join a workspace; only the hash of its token is stored."""

    id = UUIDField(primary_key=True, default=uuid.uuid4)
    workspace = ForeignKeyField(Workspace, backref="invitations", on_delete="CASCADE")
    email = CharField(max_length=320)
    role = CharField(max_length=10)
    token_hash = CharField(max_length=64, unique=True)
    invited_by = ForeignKeyField(User, null=True, on_delete="SET NULL")
    created_at = DateTimeField(default=utcnow)
    expires_at = DateTimeField()
    accepted_at = DateTimeField(null=True)


class PasswordReset(BaseModel):
    """A one-time link to set a new password; only the hash of its token is stored."""

    id = UUIDField(primary_key=True, default=uuid.uuid4)
    user = ForeignKeyField(User, backref="password_resets", on_delete="CASCADE")
    token_hash = CharField(max_length=64, unique=True)
    created_at = DateTimeField(default=utcnow)
    expires_at = DateTimeField()
    used_at = DateTimeField(null=True)


class WebSession(BaseModel):
    """A signed-in browser: the cookie carries the token, the table its hash.
    ``expires_at`` is the idle deadline, moved on by use but never past the absolute one
    (``created_at`` plus the absolute lifetime)."""

    token_hash = CharField(max_length=64, primary_key=True)
    user = ForeignKeyField(User, backref="sessions", on_delete="CASCADE")
    created_at = DateTimeField(default=utcnow)
    expires_at = DateTimeField()
    last_seen_at = DateTimeField(null=True)
    user_agent = CharField(max_length=300, null=True)
    ip = CharField(max_length=45, null=True)  # where it signed in (the Account page shows it)


class TwoFactor(BaseModel):
    """A user's authenticator (engine/people/two_factor.py): the TOTP secret, encrypted at
    rest, on once ``enabled_at`` is set (a code confirmed it); the last time step used, so
    no code works twice. A table of its own: the session query of every page reads the
    user's row, and need not decrypt a secret for it."""

    user = ForeignKeyField(User, primary_key=True, on_delete="CASCADE")
    secret = EncryptedField()
    enabled_at = DateTimeField(null=True)
    last_step = BigIntegerField(null=True)


class RecoveryCode(BaseModel):
    """A one-time code that stands in for the authenticator app; only its hash is kept."""

    id = AutoField()
    user = ForeignKeyField(User, backref="recovery_codes", on_delete="CASCADE")
    code_hash = CharField(max_length=64)
    used_at = DateTimeField(null=True)

    class Meta:
        indexes = ((("user", "code_hash"), True),)


class TwoFactorPolicy(BaseModel):
    """A workspace whose Owner requires two-factor sign-in of every member."""

    workspace = ForeignKeyField(Workspace, primary_key=True, on_delete="CASCADE")
    required_by = ForeignKeyField(User, null=True, on_delete="SET NULL")
    required_at = DateTimeField(default=utcnow)


class AuditEvent(BaseModel):
    """Who did what in a workspace, and when; ``details`` never holds a secret's value."""

    id = AutoField()
    workspace = ForeignKeyField(Workspace, backref="audit_events", on_delete="CASCADE")
    actor = ForeignKeyField(User, null=True, on_delete="SET NULL")
    actor_label = CharField(max_length=320)  # kept when the user is gone; "operator" for CLI
    action = CharField(max_length=60)
    subject = TextField(default="")
    details = JSONField(default=dict)
    at = DateTimeField(default=utcnow)

    class Meta:
        indexes = ((("workspace", "at"), False),)


class Passkey(BaseModel):
    """A WebAuthn credential a person signs in with (engine/people/passkeys.py): a
    discoverable credential made with user verification, so it counts as two factors.
    ``credential_id`` is base64url, as browsers name it; ``sign_count`` the authenticator's
    counter at its last use (a use that does not raise it is refused: a cloned key)."""

    id = AutoField()
    user = ForeignKeyField(User, backref="passkeys", on_delete="CASCADE")
    name = CharField(max_length=100)
    credential_id = CharField(max_length=1400, unique=True)
    public_key = BlobField()
    sign_count = BigIntegerField(default=0)
    created_at = DateTimeField(default=utcnow)
    last_used_at = DateTimeField(null=True)


class OidcIdentity(BaseModel):
    """A person's account at the single sign-on issuer (engine/people/single_sign_on.py),
    linked at their first sign-in through it: the issuer and its subject identifier."""

    id = AutoField()
    user = ForeignKeyField(User, backref="oidc_identities", on_delete="CASCADE")
    issuer = CharField(max_length=500)
    subject = CharField(max_length=255)
    email = CharField(max_length=320)
    created_at = DateTimeField(default=utcnow)
    last_used_at = DateTimeField(null=True)

    class Meta:
        indexes = ((("issuer", "subject"), True),)


SIGN_IN_MODELS: tuple[type[BaseModel], ...] = (Passkey, OidcIdentity)
PEOPLE_MODELS: tuple[type[BaseModel], ...] = (
    User, Membership, Invitation, PasswordReset, WebSession, AuditEvent, TwoFactor,
    RecoveryCode, TwoFactorPolicy, *SIGN_IN_MODELS)
