"""API key lifecycle: create (value shown once), revoke, and describe."""

from __future__ import annotations

import datetime as dt
from typing import Any

from engine.database import generations, secrets
from engine.database.models import ApiKey, Workspace, utcnow


class KeyLifecycleError(ValueError):
    """A key operation that cannot be done (unknown workspace, duplicate name...)."""


def iso(value: dt.datetime | None) -> str | None:
    """UTC timestamps as RFC 3339 with a Z, the form every output of Herald uses."""
    if value is None:
        return None
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value.isoformat(timespec="seconds") + "Z"


def parse_time(value: str) -> dt.datetime:
    """Parse an RFC 3339 time to naive UTC; a time without an offset is taken as UTC."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    parsed = dt.datetime.fromisoformat(text)
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(dt.UTC).replace(tzinfo=None)
    return parsed


def create_key(
    workspace: Workspace, name: str, expires_at: dt.datetime | None = None,
    revoked: bool = False,
) -> tuple[ApiKey, str]:
    """Create a key and return it with its value; only the hash is stored."""
    if ApiKey.select().where(ApiKey.workspace == workspace, ApiKey.name == name).exists():
        raise KeyLifecycleError(f"workspace {workspace.id} already has a key named {name!r}")
    value = secrets.new_api_key()
    key = ApiKey.create(
        workspace=workspace,
        name=name,
        key_hash=secrets.hash_api_key(value),
        expires_at=expires_at,
        revoked_at=utcnow() if revoked else None,
    )
    generations.changed_keys()  # a process may hold "no such key" for this value's digest
    return key, value


def revoke_key(key: ApiKey) -> ApiKey:
    """Revoke a key; revoking twice keeps the first revocation time."""
    if key.revoked_at is None:
        key.revoked_at = utcnow()
        key.save()
        generations.changed_keys()
    return key


def rotate_signing_secret(workspace: Workspace) -> str:
    """A new webhook signing secret, returned this once. It takes effect at once: every
    attempt, pending retries included, reads the workspace's current secret (D7)."""
    workspace.signing_secret = secrets.new_signing_secret()
    workspace.save()
    return workspace.signing_secret


def describe(key: ApiKey, value: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": str(key.id),
        "workspaceId": str(key.workspace_id),
        "name": key.name,
        "status": key.status_at(),
        "createdAt": iso(key.created_at),
        "expiresAt": iso(key.expires_at),
        "revokedAt": iso(key.revoked_at),
    }
    if value is not None:
        out["key"] = value
    return out


def keys_of(workspace: Workspace) -> list[ApiKey]:
    """The workspace's keys, newest first."""
    return list(ApiKey.select().where(ApiKey.workspace == workspace)
                .order_by(ApiKey.created_at.desc(), ApiKey.name))


def key_in(workspace: Workspace, key_id: Any) -> ApiKey | None:
    """A key of the workspace; another workspace's is as absent as an unknown one."""
    return ApiKey.get_or_none(ApiKey.id == key_id, ApiKey.workspace == workspace)
