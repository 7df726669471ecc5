"""Inbound secrets: the one secret per workspace and provider that authenticates the
provider's events for that workspace (docs/reports.md, "Provider events").

Every provider whose event receiver names the workspace in its URL (``per_workspace``)
gets one, made on first use, kept encrypted in ``InboundSecret`` and rotated by `herald
secret rotate-inbound` or Settings > Webhooks. The receiver says how its calls carry it
(``secret_in``: basic auth or a query parameter) and Herald builds the URL; reading and
authenticating a call stays the receiver's, beside its plugin. A rotation replaces the
secret at once, with no overlap: the reason to rotate is a URL that leaked.
"""

from __future__ import annotations

import hmac
import uuid
from typing import Any
from urllib.parse import quote

from peewee import IntegrityError

from engine import runtime
from engine.database import secrets
from engine.database.db import database
from engine.database.models import Workspace, utcnow
from engine.database.models.inbound import InboundSecret
from engine.database.models.people import User
from engine.people import audit
from engine.plugins.event_contract import EventWebhook
from engine.plugins.manager import default_registry

USER = "herald"  # the user part of a basic-auth URL: any value passes, this one reads well
ROTATED = "inbound_secret.rotated"
# Compared against when a workspace has no secret for the provider, so that a call to a
# workspace without one costs what any refused call costs.
_NONE = secrets.new_inbound_secret()


def providers() -> dict[str, EventWebhook]:
    """Every provider that brings events per workspace, by the name in its URL, in order."""
    found = default_registry().event_webhooks
    return {name: found[name] for name in sorted(found) if found[name].per_workspace}


def receiver(provider: str) -> EventWebhook:
    """The provider's per-workspace receiver; LookupError naming the ones there are."""
    found = providers().get(provider)
    if found is None:
        known = ", ".join(providers()) or "none"
        raise LookupError(f"no provider named {provider!r} brings events per workspace "
                          f"(installed: {known})")
    return found


def label(provider: str) -> str:
    """How people name the provider: its receiver's ``label``, else the name itself."""
    return str(getattr(receiver(provider), "label", None) or provider)


def _workspace(workspace: Workspace | Any) -> Workspace | None:
    if isinstance(workspace, Workspace):
        return workspace
    try:
        ident = uuid.UUID(str(workspace))
    except ValueError:
        return None
    return Workspace.get_or_none(Workspace.id == ident)


def _found(workspace: Workspace | Any) -> Workspace:
    found = _workspace(workspace)
    if found is None:
        raise LookupError(f"no workspace {workspace}")
    return found


def secret(workspace: Workspace | Any, provider: str) -> str:
    """The workspace's secret for ``provider`` (a Workspace or its id), made on first use."""
    found = _found(workspace)
    receiver(provider)
    row = _stored(found.id, provider)
    if row is not None:
        return row.secret
    try:
        with database.atomic():
            return InboundSecret.create(workspace=found.id, provider=provider,
                                        secret=secrets.new_inbound_secret()).secret
    except IntegrityError:  # made meanwhile by another request: that one stands
        return _stored(found.id, provider).secret


def _stored(workspace_id: Any, provider: str) -> InboundSecret | None:
    return InboundSecret.get_or_none(InboundSecret.workspace == workspace_id,
                                     InboundSecret.provider == provider)


def webhook_url(workspace: Workspace | Any, provider: str) -> str:
    """The URL to give the provider: its route for the workspace, carrying the secret as
    the receiver reads it (basic auth by default, or ``?token=``)."""
    found = _found(workspace)
    value = quote(secret(found, provider), safe="")
    base = runtime.settings().public_url.rstrip("/")
    path = f"/api/inbound/{quote(provider, safe='')}/{found.id}"
    if getattr(receiver(provider), "secret_in", "basic") == "query":
        return f"{base}{path}?token={value}"
    scheme, _, rest = base.partition("://")
    return f"{scheme}://{USER}:{value}@{rest}{path}"


def authentic(workspace_id: Any, provider: str, password: str | None) -> bool:
    """Whether ``password`` is the workspace's current secret for ``provider`` (compared in
    constant time); an unknown workspace, or one without a secret for it, has none. Nothing
    is made here: a caller cannot create a secret by knocking."""
    try:
        ident = uuid.UUID(str(workspace_id))
    except ValueError:
        ident = None
    row = _stored(ident, provider) if ident is not None and password else None
    expected = row.secret if row is not None else _NONE
    matches = hmac.compare_digest((password or "").encode(), expected.encode())
    return row is not None and matches


def rotate(workspace: Workspace, provider: str, actor: User | None = None) -> str:
    """A new secret for the workspace and provider, stored at once (the previous one opens
    nothing from now on), audit-logged without its value; returns the new URL."""
    secret(workspace, provider)  # made first if it never was: then replaced, as asked
    InboundSecret.update(secret=secrets.new_inbound_secret(), rotated_at=utcnow()).where(
        InboundSecret.workspace == workspace.id, InboundSecret.provider == provider).execute()
    audit.record(workspace, actor, ROTATED, label(provider), {"provider": provider})
    return webhook_url(workspace, provider)
