"""`herald export`: the database back in the `herald apply` format (round-trips through apply)."""

from __future__ import annotations

import json
from typing import Any

from engine.catalog.keys import iso
from engine.database.models import (
    Account,
    ApiKey,
    Container,
    Project,
    Sender,
    Suppression,
    Template,
    TemplateVersion,
    Workspace,
)
from engine.database.models.partials import Partial, PartialVersion
from engine.database.models.recipients import Topic
from engine.database.vocabulary import VersionStatus
from engine.provisioning.document import version_fields
from engine.provisioning.references import (
    ReferenceNamer,
    map_provider_urls,
    without_credentials,
)

# Fields written only when set: a version without a topic reads as it did before topics.
OMITTED_WHEN_NULL = ("topic",)


def _defaults(row: Any) -> dict[str, list[str]]:
    defaults = row.defaults or {}
    return {k: list(defaults.get(k) or []) for k in ("to", "cc", "bcc")}


def _version(channel: str, row: TemplateVersion, marked: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"status": "draft" if row.status == VersionStatus.DRAFT else "published"}
    if marked:
        out["live"] = True
    if row.locked:
        out["locked"] = True
    for key in version_fields(channel):
        if key in row.content and (key not in OMITTED_WHEN_NULL or row.content[key] is not None):
            out[key] = row.content[key]
    if "inlineCss" in row.content:
        out["inlineCss"] = row.content["inlineCss"]
    if row.content.get("variants"):
        out["variants"] = row.content["variants"]
    return out


def _template(row: Template) -> dict[str, Any]:
    versions = list(row.versions.order_by(TemplateVersion.number))
    published = [v.number for v in versions if v.status != VersionStatus.DRAFT]
    live = next((v.number for v in versions if v.status == VersionStatus.LIVE), None)
    # apply makes the last published version live unless one is marked `live: true`: mark
    # the live one only when it is not the last published (an older draft was published).
    marked = live if published and live != published[-1] else None
    return {
        "id": str(row.id),
        "name": row.name,
        "channel": row.channel,
        "defaults": _defaults(row),
        "versions": [_version(row.channel, v, v.number == marked) for v in versions],
    }


def _folder(project: Project, parent: Container | None, row: Any) -> dict[str, Any]:
    in_parent = Container.parent.is_null() if parent is None else Container.parent == parent
    in_folder = Template.container.is_null() if parent is None else Template.container == parent
    containers = Container.select().where(Container.project == project, in_parent).order_by(
        Container.name)
    templates = Template.select().where(Template.project == project, in_folder).order_by(
        Template.name)
    out: dict[str, Any] = {"name": row.name, "defaults": _defaults(row)}
    out["containers"] = [_folder(project, c, c) for c in containers]
    out["templates"] = [_template(t) for t in templates]
    return out


def _partials(row: Workspace) -> list[dict[str, Any]]:
    """The workspace's partials, each version's status and body (apply makes the last
    published one live, as it is)."""
    out = []
    for partial in Partial.select().where(Partial.workspace == row).order_by(Partial.name):
        versions = partial.versions.order_by(PartialVersion.number)
        out.append({"name": partial.name, "versions": [
            {"status": "draft" if v.status == VersionStatus.DRAFT else "published",
             "body": v.body} for v in versions]})
    return out


def _workspace(row: Workspace, path: str, namer: ReferenceNamer) -> dict[str, Any]:
    keys = ApiKey.select().where(ApiKey.workspace == row).order_by(ApiKey.name)
    api_keys = []
    for key in keys:
        entry: dict[str, Any] = {"name": key.name}
        if key.revoked_at is not None:
            entry["status"] = "revoked"
        if key.expires_at is not None:
            entry["expiresAt"] = iso(key.expires_at)
        api_keys.append(entry)
    suppressions = Suppression.select().where(Suppression.workspace == row).order_by(
        Suppression.address)
    projects = Project.select().where(Project.workspace == row).order_by(Project.name)
    topics = [{"name": t.name, **({"description": t.description} if t.description else {})}
              for t in Topic.select().where(Topic.workspace == row).order_by(Topic.name)]
    provider = json.loads(row.email_provider) if row.email_provider else None
    return {
        "id": str(row.id),
        "name": row.name,
        # Stored encrypted, printed never: its credentials become `${NAME}` references.
        "emailProvider": map_provider_urls(
            provider, f"{path}.emailProvider",
            lambda url, where: without_credentials(url, where, namer)),
        # An address suppressed for all mail as it is; a Marketing-only one with its scope.
        "suppressions": [s.address if s.scope == "all" else {"address": s.address,
                                                             "scope": s.scope}
                         for s in suppressions],
        "apiKeys": api_keys,
        "projects": [_folder(p, None, p) for p in projects],
        # Delivery callbacks (docs/callbacks.md): written only when set, as apply reads them.
        **({"callbackUrl": row.callback_url} if row.callback_url else {}),
        **({"callbackTracking": False} if row.callback_tracking is False else {}),
        # Always written: null (kept forever, a workspace older than the setting) included.
        "retentionDays": row.retention_days,
        **({"partials": partials} if (partials := _partials(row)) else {}),
        # Topics and the SMS HELP answer (docs/delivery.md): written only when there are.
        **({"topics": topics} if topics else {}),
        **({"smsHelpText": row.sms_help_text} if row.sms_help_text else {}),
    }


def export_document(workspace_id: str | None = None) -> dict[str, Any]:
    """Everything (or one workspace and its account) in the apply format, without a
    credential (docs/apply.md, "Credentials")."""
    return export_with_references(workspace_id)[0]


def export_with_references(workspace_id: str | None = None
                           ) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The export, and the environment variables its references name (with their paths):
    what `apply` of it will need set."""
    namer = ReferenceNamer()
    accounts = Account.select().order_by(Account.name)
    out = []
    for account in accounts:
        workspaces = Workspace.select().where(Workspace.account == account).order_by(
            Workspace.name)
        if workspace_id is not None:
            workspaces = workspaces.where(Workspace.id == workspace_id)
            if not workspaces.exists():
                continue
        senders = Sender.select().where(Sender.account == account).order_by(Sender.value)
        out.append({
            "id": str(account.id),
            "name": account.name,
            "plan": account.plan,
            "monthlyLimit": account.monthly_limit,
            "webhookDelivery": account.webhook_delivery,
            "senders": {
                "domains": [s.value for s in senders if s.kind == "domain"],
                "addresses": [s.value for s in senders if s.kind == "address"],
            },
            "workspaces": [_workspace(w, f"accounts[{len(out)}].workspaces[{i}]", namer)
                           for i, w in enumerate(workspaces)],
        })
    return {"accounts": out}, namer.needed
