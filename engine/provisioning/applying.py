"""`herald apply`: create or update tenants, templates, senders and keys from one document.

The whole document is checked before anything is written, and written in one
transaction: a bad file changes nothing. Re-applying an unchanged file changes nothing.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from email_validator import EmailNotValidError, validate_email

from engine.catalog import suppressions
from engine.catalog.keys import create_key, iso, parse_time
from engine.catalog.versions import check_content, compile_content
from engine.formats.header_text import MEDIA_TYPE
from engine.store import secrets
from engine.store.db import database
from engine.store.models import (
    PLANS,
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

EMAIL_FIELDS = ("subject", "body", "htmlHead", "fromAddress", "fromName", "emailType",
                "trackOpens", "trackClicks")
SMS_FIELDS = ("body", "fromNumber")
WEBHOOK_FIELDS = ("body", "contentType")
CHANNEL_FIELDS = {"email": EMAIL_FIELDS, "sms": SMS_FIELDS, "webhook": WEBHOOK_FIELDS}
EMAIL_DEFAULTS = {"emailType": "Transactional", "trackOpens": False, "trackClicks": False,
                  "htmlHead": None, "fromName": None}
WEBHOOK_DEFAULTS = {"contentType": "application/json"}


class ApplyError(ValueError):
    """The document is invalid; ``problems`` lists every fault with its path."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass
class Outcome:
    """What one apply did: counts per kind and the keys it created (shown this once)."""

    created: dict[str, int] = field(default_factory=dict)
    updated: dict[str, int] = field(default_factory=dict)
    api_keys: list[dict[str, Any]] = field(default_factory=list)
    workspaces: list[dict[str, Any]] = field(default_factory=list)

    def count(self, bucket: dict[str, int], kind: str, n: int = 1) -> None:
        bucket[kind] = bucket.get(kind, 0) + n

    def as_json(self) -> dict[str, Any]:
        return {
            "changed": bool(self.created or self.updated),
            "created": self.created,
            "updated": self.updated,
            "workspaces": self.workspaces,
            "apiKeys": self.api_keys,
        }


# ---------------------------------------------------------------- checking


NAME_RULE = "a non-empty name of at most 200 characters is required"


def valid_name(value: object) -> bool:
    """The rule for every name a file gives (and `herald keys create`, so that what export
    prints of a key applies again)."""
    return isinstance(value, str) and bool(value.strip()) and len(value) <= 200


class _Checker:
    """Walks the document once and collects every problem with its path."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def fail(self, path: str, message: str) -> None:
        self.problems.append(f"{path}: {message}")

    def mapping(self, value: Any, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(path, "expected an object")
            return {}
        return value

    def items(self, node: dict[str, Any], key: str, path: str) -> list[Any]:
        value = node.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(f"{path}.{key}", "expected a list")
            return []
        return value

    def name(self, node: dict[str, Any], path: str) -> None:
        if not valid_name(node.get("name")):
            self.fail(f"{path}.name", NAME_RULE)

    def ident(self, node: dict[str, Any], path: str) -> None:
        if node.get("id") is None:
            return
        try:
            uuid.UUID(str(node["id"]))
        except ValueError:
            self.fail(f"{path}.id", "must be a UUID")

    def address(self, value: Any, path: str, allow_domain: bool = False) -> None:
        if not isinstance(value, str) or "\r" in value or "\n" in value:
            self.fail(path, "must be a string without line breaks")
            return
        try:
            if allow_domain:
                validate_email("x@" + value, check_deliverability=False)
            else:
                validate_email(value, check_deliverability=False)
        except EmailNotValidError as err:
            self.fail(path, f"not a valid {'domain' if allow_domain else 'address'}: {err}")

    def defaults(self, node: dict[str, Any], path: str) -> None:
        defaults = node.get("defaults")
        if defaults is None:
            return
        defaults = self.mapping(defaults, f"{path}.defaults")
        for key, value in defaults.items():
            if key not in ("to", "cc", "bcc"):
                self.fail(f"{path}.defaults.{key}", "unknown list (to, cc or bcc)")
            elif not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                self.fail(f"{path}.defaults.{key}", "expected a list of strings")

    def document(self, doc: Any) -> None:
        doc = self.mapping(doc, "$")
        for key in doc:
            if key != "accounts":
                self.fail(f"$.{key}", "unknown key")
        for i, account in enumerate(self.items(doc, "accounts", "$")):
            self.account(self.mapping(account, f"accounts[{i}]"), f"accounts[{i}]")

    def account(self, node: dict[str, Any], path: str) -> None:
        self.ident(node, path)
        self.name(node, path)
        if node.get("plan", "basic") not in PLANS:
            self.fail(f"{path}.plan", f"must be one of {', '.join(PLANS)}")
        limit = node.get("monthlyLimit")
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)
                                  or limit < 0):
            self.fail(f"{path}.monthlyLimit", "must be a whole number >= 0 or null")
        if not isinstance(node.get("webhookDelivery", False), bool):
            self.fail(f"{path}.webhookDelivery", "must be true or false")
        senders = self.mapping(node.get("senders") or {}, f"{path}.senders")
        for i, domain in enumerate(self.items(senders, "domains", f"{path}.senders")):
            self.address(domain, f"{path}.senders.domains[{i}]", allow_domain=True)
        for i, addr in enumerate(self.items(senders, "addresses", f"{path}.senders")):
            self.address(addr, f"{path}.senders.addresses[{i}]")
        for i, ws in enumerate(self.items(node, "workspaces", path)):
            self.workspace(self.mapping(ws, f"{path}.workspaces[{i}]"),
                           f"{path}.workspaces[{i}]")

    def workspace(self, node: dict[str, Any], path: str) -> None:
        self.ident(node, path)
        self.name(node, path)
        provider = node.get("emailProvider")
        if provider is not None:
            provider = self.mapping(provider, f"{path}.emailProvider")
            if not isinstance(provider.get("plugin"), str) or not isinstance(
                provider.get("url"), str
            ):
                self.fail(f"{path}.emailProvider", "needs string members plugin and url")
            else:
                # The check HERALD_EMAIL_PROVIDER gets at start-up: else every send fails on it.
                from engine.plugins.manager import provider_problem

                if problem := provider_problem(provider["url"], provider["plugin"]):
                    self.fail(f"{path}.emailProvider", problem)
        for i, addr in enumerate(self.items(node, "suppressions", path)):
            self.address(addr, f"{path}.suppressions[{i}]")
        names: set[str] = set()
        for i, key in enumerate(self.items(node, "apiKeys", path)):
            key = self.mapping(key, f"{path}.apiKeys[{i}]")
            self.name(key, f"{path}.apiKeys[{i}]")
            if key.get("name") in names:
                self.fail(f"{path}.apiKeys[{i}].name", "duplicate key name")
            names.add(key.get("name"))
            if key.get("status", "active") not in ("active", "revoked"):
                self.fail(f"{path}.apiKeys[{i}].status", "must be active or revoked")
            if key.get("expiresAt") is not None:
                try:
                    parse_time(str(key["expiresAt"]))
                except ValueError:
                    self.fail(f"{path}.apiKeys[{i}].expiresAt", "must be an RFC 3339 time")
        for i, project in enumerate(self.items(node, "projects", path)):
            self.folder(self.mapping(project, f"{path}.projects[{i}]"),
                        f"{path}.projects[{i}]")

    def folder(self, node: dict[str, Any], path: str) -> None:
        self.name(node, path)
        self.defaults(node, path)
        for i, child in enumerate(self.items(node, "containers", path)):
            self.folder(self.mapping(child, f"{path}.containers[{i}]"),
                        f"{path}.containers[{i}]")
        for i, template in enumerate(self.items(node, "templates", path)):
            self.template(self.mapping(template, f"{path}.templates[{i}]"),
                          f"{path}.templates[{i}]")

    def template(self, node: dict[str, Any], path: str) -> None:
        self.ident(node, path)
        self.name(node, path)
        self.defaults(node, path)
        channel = node.get("channel")
        if channel not in CHANNEL_FIELDS:
            self.fail(f"{path}.channel", "must be email, sms or webhook")
            return
        first_live: int | None = None
        for i, version in enumerate(self.items(node, "versions", path)):
            version = self.mapping(version, f"{path}.versions[{i}]")
            self.version(channel, version, f"{path}.versions[{i}]")
            if version.get("live") is True:
                if first_live is None:
                    first_live = i
                else:
                    self.fail(f"{path}.versions[{i}].live", "a template has one live version "
                              f"(versions[{first_live}] is marked live already)")

    def version(self, channel: str, node: dict[str, Any], path: str) -> None:
        from engine.rendering import TemplateSyntaxError

        allowed = {*CHANNEL_FIELDS[channel], "status", "locked", "live"}
        for key in node:
            if key not in allowed:
                self.fail(f"{path}.{key}", f"not a field of a {channel} version")
        if node.get("status", "draft") not in ("published", "draft"):
            self.fail(f"{path}.status", "must be published or draft")
        if "live" in node:
            # Only the one live version is marked; `live: false` would read as a promise
            # that the last published version is not live, which apply cannot keep.
            if node["live"] is not True:
                self.fail(f"{path}.live", "must be true (leave it out on the other versions)")
            elif node.get("status") != "published":
                self.fail(f"{path}.live", "only a published version can be live")
        if not isinstance(node.get("body"), str):
            self.fail(f"{path}.body", "is required")
        if channel == "email":
            if not isinstance(node.get("subject"), str):
                self.fail(f"{path}.subject", "is required")
            if node.get("fromAddress") is not None:
                self.address(node["fromAddress"], f"{path}.fromAddress")
            if node.get("emailType", "Transactional") not in ("Transactional", "Marketing"):
                self.fail(f"{path}.emailType", "must be Transactional or Marketing")
            for flag in ("trackOpens", "trackClicks"):
                if not isinstance(node.get(flag, False), bool):
                    self.fail(f"{path}.{flag}", "must be true or false")
        if channel == "webhook" and node.get("contentType") is not None and not (
                isinstance(node["contentType"], str) and MEDIA_TYPE.fullmatch(
                    node["contentType"])):
            # It is sent as the Content-Type header of every delivery.
            self.fail(f"{path}.contentType", "must be a media type (type/subtype; params)")
        try:
            check_content(channel, node)
        except TemplateSyntaxError as err:
            self.fail(path, f"invalid template: {err}")


def check_document(doc: Any) -> None:
    """Raise ApplyError listing every problem in the document."""
    checker = _Checker()
    checker.document(doc)
    if checker.problems:
        raise ApplyError(checker.problems)


# ---------------------------------------------------------------- writing


def _sync(model: Any, values: dict[str, Any]) -> bool:
    """Set the fields that differ; save only when something changed."""
    changed = [k for k, v in values.items() if getattr(model, k) != v]
    for key in changed:
        setattr(model, key, values[key])
    if changed:
        model.save()
    return bool(changed)


def _recipients(node: dict[str, Any]) -> dict[str, list[str]]:
    defaults = node.get("defaults") or {}
    return {k: list(defaults.get(k) or []) for k in ("to", "cc", "bcc")}


class _Writer:
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
               kind: str, path: str) -> Any:
        row = self.find(model, node, match, path, kind.rstrip("s"))
        return self.save(model, row, node, values, kind)

    def save(self, model: type, row: Any, node: dict[str, Any], values: dict[str, Any],
             kind: str) -> Any:
        """Create the row (with the file's id, if any) or bring it in line with ``values``."""
        if row is None:
            extra = {"id": uuid.UUID(str(node["id"]))} if node.get("id") else {}
            row = model.create(**extra, **values)
            self.out.count(self.out.created, kind)
        elif _sync(row, values):
            self.out.count(self.out.updated, kind)
        return row

    def account(self, node: dict[str, Any], path: str) -> None:
        values = {
            "name": node["name"],
            "plan": node.get("plan", "basic"),
            "monthly_limit": node.get("monthlyLimit"),
            "webhook_delivery": bool(node.get("webhookDelivery", False)),
        }
        account = self.upsert(Account, node, Account.name == node["name"], values, "accounts",
                              path)
        senders = node.get("senders") or {}
        for kind, key in (("domain", "domains"), ("address", "addresses")):
            for value in senders.get(key) or []:
                _, created = Sender.get_or_create(
                    account=account, kind=kind, value=value.strip().lower()
                )
                if created:
                    self.out.count(self.out.created, "senders")
        domains, addresses = SENDER_ALLOWANCES[account.plan]
        for kind, allowed in (("domain", domains), ("address", addresses)):
            have = Sender.select().where(Sender.account == account, Sender.kind == kind).count()
            if have > allowed:
                raise ApplyError([f"account {account.name!r}: plan {account.plan} allows "
                                  f"{allowed} verified {kind}s, the file gives {have}"])
        for i, ws in enumerate(node.get("workspaces") or []):
            self.workspace(account, ws, f"{path}.workspaces[{i}]")

    def workspace(self, account: Account, node: dict[str, Any], path: str) -> None:
        provider = node.get("emailProvider")
        values = {
            "account": account,
            "name": node["name"],
            "email_provider": json.dumps(provider, sort_keys=True) if provider else None,
        }
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
        added = suppressions.add(row.id, node.get("suppressions") or [], "manual")
        if added:
            self.out.count(self.out.created, "suppressions", added)
        for i, key in enumerate(node.get("apiKeys") or []):
            self.api_key(row, key, f"{path}.apiKeys[{i}]")
        for i, project in enumerate(node.get("projects") or []):
            self.project(row, project, f"{path}.projects[{i}]")

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
        values: dict[str, Any] = {"expires_at": expires}
        if existing.revoked_at is not None and node.get("status") == "active":
            raise ApplyError([f"{path}.status: key {existing.name!r} is revoked, and a "
                              "revocation is never undone (drop the status, or create a key "
                              "under another name)"])
        if revoked and existing.revoked_at is None:
            values["revoked_at"] = utcnow()
        if _sync(existing, values):
            self.out.count(self.out.updated, "apiKeys")

    def project(self, workspace: Workspace, node: dict[str, Any], path: str) -> None:
        values = {"workspace": workspace, "name": node["name"], "defaults": _recipients(node)}
        match = (Project.workspace == workspace) & (Project.name == node["name"])
        project = self.upsert(Project, {}, match, values, "projects", path)
        self.children(workspace, project, None, node, path)

    def children(self, workspace: Workspace, project: Project, parent: Container | None,
                 node: dict[str, Any], path: str) -> None:
        for i, child in enumerate(node.get("containers") or []):
            parent_match = (Container.parent.is_null() if parent is None
                            else Container.parent == parent)
            match = (Container.project == project) & parent_match & (
                Container.name == child["name"])
            values = {"project": project, "parent": parent, "name": child["name"],
                      "defaults": _recipients(child)}
            child_path = f"{path}.containers[{i}]"
            container = self.upsert(Container, {}, match, values, "containers", child_path)
            self.children(workspace, project, container, child, child_path)
        for i, template in enumerate(node.get("templates") or []):
            self.template(workspace, project, parent, template, f"{path}.templates[{i}]")

    def template(self, workspace: Workspace, project: Project, container: Container | None,
                 node: dict[str, Any], path: str) -> None:
        values = {"workspace": workspace, "project": project, "container": container,
                  "name": node["name"], "channel": node["channel"],
                  "defaults": _recipients(node)}
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
        template = self.save(Template, existing, node, values, "templates")
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
            content = _content(channel, node)
            if node.get("status") == "published":
                status = "live" if index == live_index else "previous"
            else:
                status = "draft"
            locked = bool(node.get("locked", False))
            row = existing.get(number)
            if row is None:
                compiled = compile_content(channel, content) if status != "draft" else None
                TemplateVersion.create(
                    template=template, number=number, status=status, locked=locked,
                    content=content, compiled=compiled,
                    published_at=utcnow() if status != "draft" else None,
                )
                self.out.count(self.out.created, "versions")
                continue
            if row.status != "draft" and row.content != content:
                raise ApplyError([f"template {template.name!r} version {number} is published; "
                                  "its content cannot change (add a new version)"])
            if row.status != "draft" and status == "draft":
                raise ApplyError([f"template {template.name!r} version {number} is published "
                                  "and cannot become a draft again"])
            values: dict[str, Any] = {"status": status, "locked": locked or row.locked,
                                      "content": content}
            if row.status == "draft" and status != "draft":
                values["compiled"] = compile_content(channel, content)
                values["published_at"] = utcnow()
            if _sync(row, values):
                self.out.count(self.out.updated, "versions")
        if live_index is not None:
            # A file that lists no published version says nothing about which one is live.
            demoted = (TemplateVersion.update(status="previous")
                       .where(TemplateVersion.template == template,
                              TemplateVersion.status == "live",
                              TemplateVersion.number != live_index + 1)
                       .execute())
            if demoted:
                self.out.count(self.out.updated, "versions", demoted)


def _content(channel: str, node: dict[str, Any]) -> dict[str, Any]:
    """The stored content of a version: every field of its channel, defaults filled in."""
    defaults = {"email": EMAIL_DEFAULTS, "webhook": WEBHOOK_DEFAULTS}.get(channel, {})
    content: dict[str, Any] = {key: None for key in CHANNEL_FIELDS[channel]}
    content.update(defaults)
    content.update({key: node[key] for key in CHANNEL_FIELDS[channel] if key in node})
    return content


def apply_document(doc: Any) -> Outcome:
    """Check the whole document, then write it in one transaction."""
    check_document(doc)
    outcome = Outcome()
    writer = _Writer(outcome)
    with database.atomic():
        for i, account in enumerate(doc.get("accounts") or []):
            writer.account(account, f"accounts[{i}]")
    return outcome


__all__ = ["ApplyError", "Outcome", "apply_document", "check_document", "iso"]
