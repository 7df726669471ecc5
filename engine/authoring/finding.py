"""What the template pages find: a workspace's projects, folders and templates, one of them
by id within the workspace, a template's versions, the senders publishing accepts. The web
views call these and hold no query of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.database.models import (
    Container,
    Project,
    Sender,
    Template,
    TemplateVersion,
    Workspace,
)
from engine.database.vocabulary import VersionStatus


@dataclass
class Tree:
    """Projects with their folders and templates (each list ordered by name), and each
    template's live version number."""

    projects: list[Project]
    folders: list[Container]
    templates: list[Template]
    live: dict[Any, int]


def projects_of(workspace: Workspace) -> list[Project]:
    return list(Project.select().where(Project.workspace == workspace).order_by(Project.name))


def tree(projects: list[Project]) -> Tree:
    ids = [p.id for p in projects]
    folders = list(Container.select().where(Container.project.in_(ids))
                   .order_by(Container.name)) if ids else []
    templates = list(Template.select().where(Template.project.in_(ids))
                     .order_by(Template.name)) if ids else []
    return Tree(projects, folders, templates, live_numbers(templates))


SEARCH_LIMIT = 200


def named_like(workspace: Workspace, text: str) -> list[Template]:
    """The workspace's templates whose name holds ``text`` (case aside), by name."""
    # contains() is ILIKE (LIKE on SQLite, case-blind for ASCII) with % and _ escaped.
    return list(Template.select().where(Template.workspace == workspace.id,
                                        Template.name.contains(text))
                .order_by(Template.name).limit(SEARCH_LIMIT))


def live_numbers(templates: list[Template]) -> dict[Any, int]:
    """Each template's live version number (absent: nothing published)."""
    if not templates:
        return {}
    rows = (TemplateVersion.select(TemplateVersion.template, TemplateVersion.number)
            .where(TemplateVersion.template.in_([t.id for t in templates]),
                   TemplateVersion.status == VersionStatus.LIVE).tuples())
    return dict(rows)


def project_in(workspace: Workspace, key: Any) -> Project | None:
    return Project.get_or_none(Project.id == key, Project.workspace == workspace)


def folder_in(workspace: Workspace, key: Any) -> Container | None:
    return (Container.select(Container).join(Project)
            .where(Container.id == key, Project.workspace == workspace).first())


def template_in(workspace: Workspace, key: Any) -> Template | None:
    return Template.get_or_none(Template.id == key, Template.workspace == workspace)


def version_summaries(template: Template) -> list[TemplateVersion]:
    """The template's versions, newest first, without their content (the editor's list)."""
    return list(TemplateVersion.select(
        TemplateVersion.id, TemplateVersion.number, TemplateVersion.status,
        TemplateVersion.locked, TemplateVersion.published_at, TemplateVersion.published_by,
        TemplateVersion.edited_at, TemplateVersion.edited_by)
        .where(TemplateVersion.template == template)
        .order_by(TemplateVersion.number.desc()))


def versions(template: Template) -> list[TemplateVersion]:
    """The template's versions with their content, newest first (comparing them)."""
    return list(TemplateVersion.select().where(TemplateVersion.template == template)
                .order_by(TemplateVersion.number.desc()))


def version(template: Template, number: int) -> TemplateVersion | None:
    return TemplateVersion.get_or_none(TemplateVersion.template == template,
                                       TemplateVersion.number == number)


def verified_senders(account_id: Any) -> tuple[list[str], list[str]]:
    """(single addresses, domains) the account has verified, each sorted."""
    rows = list(Sender.select(Sender.kind, Sender.value).where(
        Sender.account == account_id, Sender.verified == True))  # noqa: E712
    return (sorted(r.value for r in rows if r.kind == "address"),
            sorted(r.value for r in rows if r.kind == "domain"))
