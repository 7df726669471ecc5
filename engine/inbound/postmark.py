"""A workspace's webhook secret, which authenticates its Postmark webhook URL (basic auth,
as Postmark's settings page takes it). Reading and authenticating the webhook's calls is
the Postmark plugin's (plugins/postmark/events.py); keeping the secret is the engine's.

Each workspace's secret is stored, encrypted, in ``workspace.postmark_secret`` (made with
the workspace) and rotated by `herald secret rotate-postmark` or Settings > Webhooks. A
workspace made before migration step 14 has none stored: the value derived from
HERALD_SECRET_KEY and its id, which Herald used before, stays its secret until its first
rotation, so a URL set up in Postmark survives the upgrade. A rotation replaces the secret
at once, with no overlap: the reason to rotate is a URL that leaked (docs/reports.md).
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from typing import Any

from engine import runtime
from engine.people import audit
from engine.people.models import User
from engine.store import secrets
from engine.store.models import Workspace

USER = "herald"
ROTATED = "postmark_secret.rotated"


def derived_secret(workspace_id: Any) -> str:
    """The secret of a workspace made before step 14, until its first rotation."""
    key = runtime.settings().secret_key.encode()
    message = f"herald postmark webhook {str(workspace_id).lower()}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:40]


def _workspace(workspace: Workspace | Any) -> Workspace | None:
    if isinstance(workspace, Workspace):
        return workspace
    try:
        ident = uuid.UUID(str(workspace))
    except ValueError:
        return None
    return Workspace.get_or_none(Workspace.id == ident)


def secret(workspace: Workspace | Any) -> str:
    """The workspace's Postmark webhook password (a Workspace or its id)."""
    found = _workspace(workspace)
    if found is None:
        raise LookupError(f"no workspace {workspace}")
    return found.postmark_secret or derived_secret(found.id)


def webhook_url(workspace: Workspace | Any) -> str:
    found = _workspace(workspace)
    if found is None:
        raise LookupError(f"no workspace {workspace}")
    base = runtime.settings().public_url.rstrip("/")
    scheme, _, rest = base.partition("://")
    return f"{scheme}://{USER}:{secret(found)}@{rest}/api/inbound/postmark/{found.id}"


def authentic(workspace: Workspace | Any, password: str | None) -> bool:
    """Whether ``password`` is the workspace's current secret (compared in constant time);
    an unknown workspace has none."""
    found = _workspace(workspace) if password else None
    return found is not None and hmac.compare_digest(password.encode(),
                                                     secret(found).encode())


def rotate(workspace: Workspace, actor: User | None = None) -> str:
    """A new secret for the workspace, stored at once (the previous one, stored or derived,
    opens nothing from now on), audit-logged without its value; returns the new URL."""
    workspace.postmark_secret = secrets.new_postmark_secret()
    workspace.save(only=[Workspace.postmark_secret])
    audit.record(workspace, actor, ROTATED)
    return webhook_url(workspace)
