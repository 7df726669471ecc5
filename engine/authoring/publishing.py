"""Publish from the editor: the checks a draft must pass, then the one lifecycle function
`herald templates publish` calls (engine/catalog/versions.py).

A draft may hold anything while it is written; publishing refuses text that does not parse
(naming the part, line and column), what the channel refuses in `herald apply` (a media
type that is not one, an address that is not one), and an email without a verified from
address: what would otherwise fail every send.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.catalog import snapshots, versions
from engine.catalog.parts import all_parts
from engine.database.db import database
from engine.database.models import Template, TemplateVersion, Workspace
from engine.database.vocabulary import VersionStatus
from engine.formats.addresses import bare_address, e164_form
from engine.plugins.manager import default_registry

LABELS = {"subject": "Subject", "body": "Body", "htmlHead": "HTML head",
          "fromAddress": "From address", "fromName": "From name", "emailType": "Email type",
          "trackOpens": "Open tracking", "trackClicks": "Click tracking",
          "fromNumber": "From number", "contentType": "Content type", "topic": "Topic",
          "inlineCss": "Inline CSS"}


def label(field: str) -> str:
    """How the editor names a content field (a plugin channel's own fields by their key;
    a language variant's part as ``Body (fr)``)."""
    locale, slash, part = field.rpartition("/")
    if slash:
        return f"{LABELS.get(part, part)} ({locale})"
    return LABELS.get(field, field)


@dataclass(frozen=True)
class Problem:
    """One reason a draft cannot be published, tied to its field (line and column for
    template text, 1-based)."""

    field: str
    message: str
    line: int | None = None
    column: int | None = None


class PublishRefused(ValueError):
    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(p.message for p in problems))
        self.problems = problems


def syntax_problems(channel: str, content: dict[str, Any]) -> list[Problem]:
    """Each template part that does not parse, with where (the renderer's own scanner)."""
    from engine.rendering import TemplateSyntaxError, check_template

    problems = []
    for part, text in all_parts(channel, content).items():
        try:
            check_template(text)
        except TemplateSyntaxError as err:
            where = "" if err.line is None else f"line {err.line}, column {err.column}: "
            problems.append(Problem(part, f"{label(part)}: {where}{err.message}", err.line,
                                    err.column))
    return problems


def sender_verified(workspace: Workspace, template: Template, address: str) -> bool:
    """The send path's rule (a verified address, or an address at a verified domain), or
    any address when the workspace sends email through its own provider (D9)."""
    if workspace.email_provider is not None:
        return True
    snap = snapshots.snapshot(str(workspace.id), str(template.id))
    return snap is not None and snap.sender_verified(bare_address(address).lower())


def _sender_problems(workspace: Workspace, template: Template,
                     content: dict[str, Any]) -> list[Problem]:
    address = content.get("fromAddress")
    if not address:
        return [Problem("fromAddress", "From address: enter the address this email is "
                                       "sent from.")]
    if not sender_verified(workspace, template, address):
        return [Problem("fromAddress", f"From address: {address} is not a verified sender "
                                       "of this account (Settings, Senders).")]
    return []


def problems(workspace: Workspace, template: Template, content: dict[str, Any]) -> list[Problem]:
    """Everything that keeps ``content`` from being published, each with its field."""
    channel = default_registry().channel(template.channel)
    found = syntax_problems(template.channel, content)
    if not found:
        found += [Problem("body", f"{label('body')}: {message}")
                  for message in versions.partial_problems(template, content)]
    found += [Problem(field, f"{label(field)}: {message}")
              for field, message in channel.check_content(content)]
    fields = {p.field for p in found}
    if "fromAddress" in channel.content_fields and "fromAddress" not in fields:
        found += _sender_problems(workspace, template, content)
    number = content.get("fromNumber")
    if number and not e164_form(number):  # the API's rule for smsOptions.fromNumber
        found.append(Problem("fromNumber", "From number: an E.164 number, a + and the "
                                           "country code and number in digits, such as "
                                           "+14155550100."))
    return found


def publish_draft(workspace: Workspace, template: Template, revision: int,
                  by: str) -> TemplateVersion:
    """Publish the draft at ``revision`` (the one the editor just saved): it becomes live,
    the live version previous, older ones pruned per plan; through versions.publish."""
    with database.atomic():
        query = TemplateVersion.select().where(TemplateVersion.template == template,
                                               TemplateVersion.status == VersionStatus.DRAFT)
        if database.obj.__class__.__name__ != "SqliteDatabase":
            query = query.for_update()
        draft = query.order_by(TemplateVersion.number.desc()).first()
        if draft is None:
            raise PublishRefused([Problem("draft", "There is no draft to publish: the live "
                                                   "version is the latest.")])
        if draft.revision != revision:
            raise PublishRefused([Problem("draft", "The draft changed while publishing: "
                                                   "check it and publish again.")])
        found = problems(workspace, template, draft.content)
        if found:
            raise PublishRefused(found)
        versions.publish(draft, by=by)
    # Every process's next send renders the new version: the workspace's generation moved
    # on at commit (engine/database/generations.py); this process drops its snapshots too.
    snapshots.clear()
    return draft
