"""Template version lifecycle: draft -> live -> previous, restore, lock, retention."""

from __future__ import annotations

from typing import Any

from engine.catalog import partials
from engine.catalog.parts import all_parts, template_parts
from engine.database import generations
from engine.database.models import Template, TemplateVersion, utcnow
from engine.database.vocabulary import VersionStatus

# Retained previous versions per plan; locked versions are always kept (spec 3.1, docs/api.md).
RETENTION = {"basic": 10, "pro": 50, "business": 200}

__all__ = ["VersionError", "partial_problems", "publish", "template_parts"]


class VersionError(ValueError):
    """A lifecycle step that the version's state does not allow."""


def check_content(channel: str, content: dict[str, Any]) -> None:
    """Refuse template text outside our Handlebars subset (raises TemplateSyntaxError)."""
    from engine.rendering import TemplateSyntaxError, check_template

    for part, text in all_parts(channel, content).items():
        try:
            check_template(text)
        except TemplateSyntaxError as err:
            raise TemplateSyntaxError(f"{part}: {err}") from None


def compile_content(channel: str, content: dict[str, Any]) -> str:
    """Compile once, at publish; the stored code makes a cold process fast."""
    from engine.rendering import compile_parts

    return compile_parts(all_parts(channel, content))


def partial_problems(template: Template, content: dict[str, Any]) -> list[str]:
    """Each partial the content calls that does not exist in the template's workspace."""
    return partials.problems_of_texts(all_parts(template.channel, content).values(),
                                      partials.graph(template.workspace_id))


def publish(version: TemplateVersion, by: str | None = None) -> TemplateVersion:
    """Make ``version`` live; the live one before it becomes previous. ``by`` names who
    published from the web application (None from `herald templates publish`)."""
    template = version.template
    if version.status != VersionStatus.DRAFT:
        raise VersionError(f"version {version.number} is {version.status}, not a draft")
    missing = partial_problems(template, version.content)
    if missing:
        raise VersionError("; ".join(missing))
    compiled = compile_content(template.channel, version.content)
    (
        TemplateVersion.update(status=VersionStatus.PREVIOUS)
        .where(TemplateVersion.template == template, TemplateVersion.status == VersionStatus.LIVE)
        .execute()
    )
    version.status = VersionStatus.LIVE
    version.compiled = compiled
    version.published_at = utcnow()
    version.published_by = by
    version.save()
    prune(template)
    generations.changed_workspace(template.workspace_id)
    return version


def prune(template: Template) -> int:
    """Drop previous versions beyond the plan's retention; locked ones stay."""
    plan = template.workspace.account.plan
    keep = RETENTION.get(plan, RETENTION["basic"])
    previous = list(
        TemplateVersion.select(TemplateVersion.id)
        .where(
            TemplateVersion.template == template,
            TemplateVersion.status == VersionStatus.PREVIOUS,
            TemplateVersion.locked == False,  # noqa: E712 (peewee expression)
        )
        .order_by(TemplateVersion.number.desc())
        .offset(keep)
    )
    if not previous:
        return 0
    doomed = [v.id for v in previous]
    return TemplateVersion.delete().where(TemplateVersion.id.in_(doomed)).execute()


def current_draft(template: Template) -> TemplateVersion | None:
    return (
        TemplateVersion.select()
        .where(TemplateVersion.template == template, TemplateVersion.status == VersionStatus.DRAFT)
        .order_by(TemplateVersion.number.desc())
        .first()
    )


def next_number(template: Template) -> int:
    last = (
        TemplateVersion.select(TemplateVersion.number)
        .where(TemplateVersion.template == template)
        .order_by(TemplateVersion.number.desc())
        .first()
    )
    return (last.number if last else 0) + 1


def restore(template: Template, number: int) -> TemplateVersion:
    """Start a new draft from a retained published version."""
    source = get_version(template, number)
    if source.status == VersionStatus.DRAFT:
        raise VersionError(f"version {number} is a draft; only published versions are restored")
    draft = current_draft(template)
    if draft is not None:
        raise VersionError(
            f"template already has a draft (version {draft.number}); publish it first"
        )
    generations.changed_workspace(template.workspace_id)
    return TemplateVersion.create(
        template=template, number=next_number(template), status=VersionStatus.DRAFT,
        content=dict(source.content),
    )


def lock(template: Template, number: int) -> TemplateVersion:
    version = get_version(template, number)
    if not version.locked:
        version.locked = True
        version.save()
        generations.changed_workspace(template.workspace_id)
    return version


def get_version(template: Template, number: int) -> TemplateVersion:
    version = TemplateVersion.get_or_none(
        TemplateVersion.template == template, TemplateVersion.number == number
    )
    if version is None:
        raise VersionError(f"template {template.id} has no version {number}")
    return version
