"""`herald apply`, second step: a checked document written (rows matched by id, else by name).

Run inside apply's one transaction: an ApplyError raised here rolls back everything.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from engine.catalog import suppressions, topics
from engine.catalog.keys import create_key, parse_time
from engine.catalog.versions import compile_content, partial_problems
from engine.database import generations, secrets
from engine.database.models import (
    SENDER_ALLOWANCES,
    Account,
    ApiKey,
    Container,
    Project,
    Sender,
    Template,
    TemplateVersion,
    Workspace,
    utcnow,
)
from engine.database.vocabulary import VersionStatus
from engine.provisioning.document import (
    ApplyError,
    Outcome,
    version_content,
    version_extras,
    version_fields,
)
from engine.provisioning.partial_writing import write_partials
from engine.senders.allowances import COUNTED
from engine.senders.names import kept_value


def _sync(model: Any, values: dict[str, Any]) -> bool:
    """Set the fields that differ; save only when something changed."""
    changed = [k for k, v in values.items() if getattr(model, k) != v]
    for key in changed:
        setattr(model, key, values[key])
    if changed:
        model.save()
    return bool(changed)


def _filled(channel: str, content: dict[str, Any]) -> dict[str, Any]:
    """Stored content with each field its channel declared since it was written (a
    version's ``topic``) as its default: what apply would write for it now."""
    declared = version_fields(channel)
    missing = [key for key in declared if key not in content]
    if not missing:
        return content
    return {**version_content(channel, {k: v for k, v in content.items() if k in declared}),
            **content}


def _recipients(node: dict[str, Any]) -> dict[str, list[str]]:
    defaults = node.get("defaults") or {}
    return {k: list(defaults.get(k) or []) for k in ("to", "cc", "bcc")}


def _mentioned(node: dict[str, Any], fields: dict[str, str]) -> dict[str, Any]:
    """The model values of the document keys ``node`` names (a key left out keeps the row's
    value: a partial file changes only what it names, docs/apply.md)."""
    return {column: node[key] for key, column in fields.items() if key in node}


def _defaults_of(node: dict[str, Any]) -> dict[str, Any]:
    """``defaults`` when the node names them, else nothing (the row keeps its own)."""
    return {"defaults": _recipients(node)} if "defaults" in node else {}


class Writer:
    """Writes each node of a checked document, counting what it creates and updates."""

    def __init__(self, outcome: Outcome) -> None:
        self.out = outcome

    def find(self, model: type, node: dict[str, Any], match: Any, path: str,
             kind: str) -> Any:
        """The row the node names: by its id, else by its match (name in its parent).

        Ids are kept, so a name that exists under another id is refused: taking that row
        would silently drop the file's id, and creating a second one would break the name.
        """
        wanted = uuid.UUID(str(node["id"])) if node.get("id") is not None else None
        if wanted is not None:
            row = model.get_or_none(model.id == wanted)
            if row is not None:
                return row
        row = model.get_or_none(match) if match is not None else None
        if row is not None and wanted is not None:
            raise ApplyError([f"{path}.id: the {kind} {row.name!r} exists with id {row.id}, "
                              f"the file gives id {wanted} (an id never changes: use "
                              f"{row.id}, or another name for a new {kind})"])
        return row

    def upsert(self, model: type, node: dict[str, Any], match: Any, values: dict[str, Any],
               kind: str, path: str, fresh: dict[str, Any] | None = None) -> Any:
        row = self.find(model, node, match, path, kind.rstrip("s"))
        return self.save(model, row, node, values, kind, fresh)

    def save(self, model: type, row: Any, node: dict[str, Any], values: dict[str, Any],
             kind: str, fresh: dict[str, Any] | None = None) -> Any:
        """Create the row (with the file's id, if any) or bring it in line with ``values``.

        ``values`` holds only what the file mentions; ``fresh`` the defaults a new row takes
        for what it leaves out. An existing row keeps every field the file does not name.
        """
        if row is None:
            extra = {"id": uuid.UUID(str(node["id"]))} if node.get("id") else {}
            row = model.create(**extra, **{**(fresh or {}), **values})
            self.out.count(self.out.created, kind)
        elif _sync(row, values):
            self.out.count(self.out.updated, kind)
        return row

    def account(self, node: dict[str, Any], path: str) -> None:
        values = _mentioned(node, {"plan": "plan", "monthlyLimit": "monthly_limit",
                                   "webhookDelivery": "webhook_delivery"})
        values["name"] = node["name"]
        fresh = {"plan": "basic", "monthly_limit": None, "webhook_delivery": False}
        account = self.upsert(Account, node, Account.name == node["name"], values, "accounts",
                              path, fresh)
        # Whatever the file changed is seen by the next request on every process (the bumps
        # run once the apply's transaction commits).
        generations.changed_account(account.id)
        senders = node.get("senders") or {}
        for kind, key in (("domain", "domains"), ("address", "addresses")):
            for value in senders.get(key) or []:
                self.sender(account, kind, value)
        domains, addresses = SENDER_ALLOWANCES[account.plan]
        for kind, allowed in (("domain", domains), ("address", addresses)):
            have = Sender.select().where(Sender.account == account, Sender.kind == kind,
                                         Sender.status.in_(COUNTED[kind])).count()
            if have > allowed:
                raise ApplyError([f"account {account.name!r}: plan {account.plan} allows "
                                  f"{allowed} verified {kind}s, the file gives {have}"])
        for i, ws in enumerate(node.get("workspaces") or []):
            self.workspace(account, ws, f"{path}.workspaces[{i}]")

    def sender(self, account: Account, kind: str, value: str) -> None:
        """Declared verified (templates as code), the verification flow's row included: the
        one model the send rule reads (docs/senders.md)."""
        row, created = Sender.get_or_create(account=account, kind=kind,
                                            value=kept_value(kind, value))
        if created:
            self.out.count(self.out.created, "senders")
        elif not row.verified:
            Sender.update(status="verified", verified=True, declared=True, missing_since=None,
                          token_hash=None).where(Sender.id == row.id).execute()
            self.out.count(self.out.updated, "senders")

    def workspace(self, account: Account, node: dict[str, Any], path: str) -> None:
        provider = node.get("emailProvider")
        values: dict[str, Any] = {"account": account, "name": node["name"]}
        if "emailProvider" in node:
            values["email_provider"] = json.dumps(provider, sort_keys=True) if provider else None
        if "callbackUrl" in node:  # docs/callbacks.md; checked with the document
            values["callback_url"] = (node["callbackUrl"] or "").strip() or None
        if "callbackTracking" in node:
            values["callback_tracking"] = node["callbackTracking"]
        if "retentionDays" in node:  # docs/operations.md, "Data retention"; null: forever
            values["retention_days"] = (None if node["retentionDays"] is None
                                        else int(node["retentionDays"]))
        if "smsHelpText" in node:  # docs/delivery.md, "SMS keywords"
            values["sms_help_text"] = (node["smsHelpText"] or "").strip() or None
        match = (Workspace.account == account) & (Workspace.name == node["name"])
        row = self.find(Workspace, node, match, path, "workspace")
        if row is None:
            secret = secrets.new_signing_secret()
            extra = {"id": uuid.UUID(str(node["id"]))} if node.get("id") else {}
            row = Workspace.create(signing_secret=secret, **extra, **values)
            self.out.count(self.out.created, "workspaces")
            # The signing secret is shown once, here, like a rotation's.
            self.out.workspaces.append({"id": str(row.id), "name": row.name,
                                        "signingSecret": secret})
        elif _sync(row, values):
            self.out.count(self.out.updated, "workspaces")
        generations.changed_workspace(row.id)
        added = self.add_suppressions(row, node.get("suppressions") or [])
        if added:
            self.out.count(self.out.created, "suppressions", added)
        for topic in node.get("topics") or []:  # before the versions that name them
            if done := topics.put(row.id, topic["name"], topic.get("description") or ""):
                self.out.count(self.out.created if done == "created" else self.out.updated,
                               "topics")
        for i, key in enumerate(node.get("apiKeys") or []):
            self.api_key(row, key, f"{path}.apiKeys[{i}]")
        # Partials first: a template published below may call them.
        if node.get("partials"):
            write_partials(self.out, row, node["partials"], f"{path}.partials")
        for i, project in enumerate(node.get("projects") or []):
            self.project(row, project, f"{path}.projects[{i}]")

    @staticmethod
    def add_suppressions(row: Workspace, entries: list[Any]) -> int:
        """An entry is an address (all mail) or {address, scope}; a row is never narrowed,
        so re-applying a file changes nothing."""
        by_scope: dict[str, list[str]] = {"all": [], "marketing": []}
        for entry in entries:
            if isinstance(entry, dict):  # all, marketing or topic:NAME
                by_scope.setdefault(entry.get("scope") or "all", []).append(entry["address"])
            else:
                by_scope["all"].append(entry)
        return sum(suppressions.add(row.id, addresses, "manual", scope)
                   for scope, addresses in by_scope.items() if addresses)

    def api_key(self, workspace: Workspace, node: dict[str, Any], path: str) -> None:
        expires = parse_time(str(node["expiresAt"])) if node.get("expiresAt") else None
        revoked = node.get("status") == "revoked"
        existing = ApiKey.get_or_none(ApiKey.workspace == workspace, ApiKey.name == node["name"])
        if existing is None:
            key, value = create_key(workspace, node["name"], expires, revoked=revoked)
            self.out.count(self.out.created, "apiKeys")
            self.out.api_keys.append({"id": str(key.id), "workspaceId": str(workspace.id),
                                      "name": key.name, "key": value})
            return
        # An existing key is never re-issued; its expiry follows the file, and `status:
        # revoked` revokes it. A revocation (by the file or `herald keys revoke`) is never
        # undone: a file without a status leaves it alone, `status: active` is refused.
        # A file naming the key without `expiresAt` leaves its expiry alone (null clears it).
        values: dict[str, Any] = {"expires_at": expires} if "expiresAt" in node else {}
        if existing.revoked_at is not None and node.get("status") == "active":
            raise ApplyError([f"{path}.status: key {existing.name!r} is revoked, and a "
                              "revocation is never undone (drop the status, or create a key "
                              "under another name)"])
        if revoked and existing.revoked_at is None:
            values["revoked_at"] = utcnow()
        if _sync(existing, values):
            self.out.count(self.out.updated, "apiKeys")
            generations.changed_keys()

    def project(self, workspace: Workspace, node: dict[str, Any], path: str) -> None:
        values = {"workspace": workspace, "name": node["name"], **_defaults_of(node)}
        match = (Project.workspace == workspace) & (Project.name == node["name"])
        project = self.upsert(Project, {}, match, values, "projects", path,
                              {"defaults": _recipients({})})
        self.children(workspace, project, None, node, path)

    def children(self, workspace: Workspace, project: Project, parent: Container | None,
                 node: dict[str, Any], path: str) -> None:
        for i, child in enumerate(node.get("containers") or []):
            parent_match = (Container.parent.is_null() if parent is None
                            else Container.parent == parent)
            match = (Container.project == project) & parent_match & (
                Container.name == child["name"])
            values = {"project": project, "parent": parent, "name": child["name"],
                      **_defaults_of(child)}
            child_path = f"{path}.containers[{i}]"
            container = self.upsert(Container, {}, match, values, "containers", child_path,
                                    {"defaults": _recipients({})})
            self.children(workspace, project, container, child, child_path)
        for i, template in enumerate(node.get("templates") or []):
            self.template(workspace, project, parent, template, f"{path}.templates[{i}]")

    def template(self, workspace: Workspace, project: Project, container: Container | None,
                 node: dict[str, Any], path: str) -> None:
        values = {"workspace": workspace, "project": project, "container": container,
                  "name": node["name"], "channel": node["channel"], **_defaults_of(node)}
        in_folder = (Template.container.is_null() if container is None
                     else Template.container == container)
        match = (Template.project == project) & in_folder & (Template.name == node["name"])
        existing = self.find(Template, node, match, path, "template")
        if existing is not None and existing.workspace_id != workspace.id:
            raise ApplyError([f"{path}.id: template {node['id']} belongs to another workspace"])
        if existing is not None and existing.channel != node["channel"] and \
                existing.versions.exists():
            # Its versions were written (and checked) for the old channel.
            raise ApplyError([f"{path}.channel: channel cannot change ({existing.channel} to "
                              f"{node['channel']}): create a new template"])
        template = self.save(Template, existing, node, values, "templates",
                             {"defaults": _recipients({})})
        if existing is None:
            self.out.templates.append({"id": str(template.id), "name": template.name,
                                       "workspaceId": str(workspace.id),
                                       "channel": template.channel})
        self.versions(template, node.get("versions") or [])

    def versions(self, template: Template, nodes: list[dict[str, Any]]) -> None:
        """Versions by position; the one marked `live: true`, else the last published, is
        live, and after this it is the template's only live version (versions the file does
        not list are kept, a live one among them becomes previous)."""
        channel = template.channel
        marked = [i for i, v in enumerate(nodes) if v.get("live") is True]
        published = [i for i, v in enumerate(nodes) if v.get("status") == "published"]
        live_index = marked[0] if marked else (published[-1] if published else None)
        existing = {v.number: v for v in template.versions}
        for index, node in enumerate(nodes):
            number = index + 1
            row = existing.get(number)
            content = version_content(channel, node)
            content.update(version_extras(channel, node, row.content if row else None))
            if content.get("topic") and content["topic"] not in topics.names(template.workspace_id):
                raise ApplyError([f"template {template.name!r} version {number}: topic "
                                  f"{content['topic']!r} is not one of the workspace's topics "
                                  "(list it under the workspace's topics)"])
            if node.get("status") == "published":
                status = VersionStatus.LIVE if index == live_index else VersionStatus.PREVIOUS
            else:
                status = VersionStatus.DRAFT
            locked = bool(node.get("locked", False))
            if status != VersionStatus.DRAFT and (missing := partial_problems(template, content)):
                raise ApplyError([f"template {template.name!r} version {number}: {m}"
                                  for m in missing])
            if row is None:
                draft = status == VersionStatus.DRAFT
                compiled = None if draft else compile_content(channel, content)
                TemplateVersion.create(
                    template=template, number=number, status=status, locked=locked,
                    content=content, compiled=compiled,
                    published_at=None if draft else utcnow(),
                )
                self.out.count(self.out.created, "versions")
                continue
            if _filled(channel, row.content) == content:
                content = row.content  # written before a field existed: the same content
            if row.status != VersionStatus.DRAFT and row.content != content:
                raise ApplyError([f"template {template.name!r} version {number} is published; "
                                  "its content cannot change (add a new version)"])
            if row.status != VersionStatus.DRAFT and status == VersionStatus.DRAFT:
                raise ApplyError([f"template {template.name!r} version {number} is published "
                                  "and cannot become a draft again"])
            values: dict[str, Any] = {"status": status, "locked": locked or row.locked,
                                      "content": content}
            if row.status == VersionStatus.DRAFT and status != VersionStatus.DRAFT:
                values["compiled"] = compile_content(channel, content)
                values["published_at"] = utcnow()
            if _sync(row, values):
                self.out.count(self.out.updated, "versions")
        if live_index is not None:
            # A file that lists no published version says nothing about which one is live.
            demoted = (TemplateVersion.update(status=VersionStatus.PREVIOUS)
                       .where(TemplateVersion.template == template,
                              TemplateVersion.status == VersionStatus.LIVE,
                              TemplateVersion.number != live_index + 1)
                       .execute())
            if demoted:
                self.out.count(self.out.updated, "versions", demoted)
