"""The editor's single draft: what the editor shows, autosave with conflict detection,
restore into the draft, unlock.

Each save names the draft and revision it was made from; the write is a compare-and-set
on that revision (one UPDATE of the draft row and nothing else), so a second tab that
edited an older revision is refused and shown the other text instead of overwriting it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from peewee import IntegrityError

from engine.catalog import versions
from engine.database.db import database
from engine.database.models import Template, TemplateVersion, utcnow
from engine.database.vocabulary import VersionStatus
from engine.plugins.manager import default_registry
from engine.provisioning.document import version_content

MAX_FIELD_CHARS = 1_048_576  # a part renders to at most this much (spec 2.3)


class DraftError(ValueError):
    """Content the draft cannot hold (a field too long, an unknown email type)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class DraftConflict(Exception):
    """The draft changed since the editor loaded it (another tab, another person, a
    publish). ``current`` is the draft now (None when there is none), ``live`` the live
    version, so the editor can offer the other text."""

    def __init__(self, current: TemplateVersion | None, live: TemplateVersion | None) -> None:
        super().__init__("the draft changed since this editor loaded it")
        self.current = current
        self.live = live


@dataclass(frozen=True)
class Basis:
    """The draft an edit was made from: its number and revision (None: there was none)."""

    number: int | None
    revision: int

    @classmethod
    def of(cls, draft: TemplateVersion | None) -> Basis:
        return cls(draft.number, draft.revision) if draft else cls(None, 0)

    @classmethod
    def parse(cls, text: str | None) -> Basis:
        """From the editor's hidden field, ``"number:revision"`` or ``""``."""
        number, _, revision = (text or "").partition(":")
        try:
            return cls(int(number), int(revision)) if number else cls(None, 0)
        except ValueError:
            return cls(-1, -1)  # tampered with: matches no draft, so the save is refused

    def __str__(self) -> str:
        return "" if self.number is None else f"{self.number}:{self.revision}"


@dataclass(frozen=True)
class Editable:
    """What the editor shows: the draft, else the live version, else an empty one."""

    content: dict[str, Any]
    draft: TemplateVersion | None
    live: TemplateVersion | None

    @property
    def basis(self) -> Basis:
        return Basis.of(self.draft)

    @property
    def number(self) -> int | None:
        """The number the draft has or will have."""
        return self.draft.number if self.draft else None


def empty_content(channel: str) -> dict[str, Any]:
    """A version's content as `herald apply` stores it: every field the channel declares,
    its defaults filled in, and the fields it requires (a body, a subject) as empty text."""
    content = version_content(channel, {})
    for field, _ in default_registry().channel(channel).check_content(content):
        if content.get(field) is None:
            content[field] = ""
    if default_registry().channel(channel).inlines_css:
        content["inlineCss"] = True  # a new version inlines its CSS (docs/rendering.md)
    return content


def _text(key: str, value: object, template_text: bool) -> str:
    text = value if isinstance(value, str) else ""
    # Browsers send CR LF for a textarea's line breaks: store what was typed.
    text = text.replace("\r\n", "\n")
    if len(text) > MAX_FIELD_CHARS:
        raise DraftError(f"At most {MAX_FIELD_CHARS:,} characters.", key)
    return text if template_text else text.strip()


def content_from_form(channel: str, form: Mapping[str, Any]) -> dict[str, Any]:
    """The editor's fields as version content: a field whose default is true or false is a
    checkbox (present or not); template text is kept as typed, other text trimmed; an empty
    optional field is its default (null when it has none), as an absent one in apply."""
    declared = default_registry().channel(channel)
    content = empty_content(channel)
    parts = {part for part, _ in declared.template_parts(content)}
    for key in declared.content_fields:
        default = declared.content_defaults.get(key)
        if isinstance(default, bool):
            content[key] = form.get(key) in ("on", "true", "1", True)
            continue
        text = _text(key, form.get(key), key in parts)
        content[key] = text if text or content[key] == "" else default
    for shown in declared.editor_fields:
        if shown.widget == "select" and content.get(shown.name) not in shown.choices:
            raise DraftError(f"Choose {' or '.join(shown.choices)}.", shown.name)
    if declared.inlines_css:
        content["inlineCss"] = form.get("inlineCss") in ("on", "true", "1", True)
    found = variants_from_form(sorted(parts), form)
    if found:
        content["variants"] = found
    return content


VARIANT_FIELD = "variants."  # the editor names a variant's part "variants.<tag>.<part>"


def variants_from_form(parts: list[str], form: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The language variants the editor posted, in the order of their fields; an empty
    part is left out (the version's own text renders for it)."""
    from engine.catalog.variants import valid_tag

    out: dict[str, dict[str, Any]] = {}
    for key in form:
        if not key.startswith(VARIANT_FIELD):
            continue
        locale, _, part = key[len(VARIANT_FIELD):].rpartition(".")
        if not valid_tag(locale) or part not in parts:
            continue
        variant = out.setdefault(locale.lower(), {"locale": locale})
        text = _text(key, form.get(key), True)
        if text:
            variant[part] = text
    return list(out.values())


def add_language(template: Template, tag: str, by: str) -> TemplateVersion:
    """A new language variant in the draft (made from the live version when there is none),
    its parts started from the version's own text for the translator to replace."""
    from engine.catalog.variants import TAG_RULE, valid_tag, variants

    tag = (tag or "").strip()
    if not valid_tag(tag):
        raise DraftError(f"Enter {TAG_RULE}.", "language")
    editable_now = editable(template)
    content = dict(editable_now.content)
    existing = variants(content)
    if any(v["locale"].lower() == tag.lower() for v in existing):
        raise DraftError(f"This version already has the language {tag}.", "language")
    parts = [p for p, _ in default_registry().channel(template.channel).template_parts(content)]
    added = {"locale": tag, **{p: content[p] for p in parts if isinstance(content.get(p), str)
                                and content[p]}}
    content["variants"] = [*existing, added]
    return save_draft(template, content, editable_now.basis, by)


def remove_language(template: Template, tag: str, revision: int, by: str) -> TemplateVersion:
    """The draft at ``revision`` without its variant ``tag`` (matched without case): the
    live version keeps sending it until the draft is published. DraftConflict when the
    draft moved on since the author confirmed; DraftError when it has no such variant."""
    from engine.catalog.variants import variants

    draft = versions.current_draft(template)
    if draft is None or draft.revision != revision:
        raise DraftConflict(draft, live_version(template))
    content = dict(draft.content)
    kept = [v for v in variants(content) if v["locale"].lower() != (tag or "").lower()]
    if len(kept) == len(variants(content)):
        raise DraftError(f"The draft has no language {tag}.", "language")
    if kept:
        content["variants"] = kept
    else:
        content.pop("variants", None)
    return save_draft(template, content, Basis.of(draft), by)


def live_version(template: Template) -> TemplateVersion | None:
    return (TemplateVersion.select()
            .where(TemplateVersion.template == template,
                   TemplateVersion.status == VersionStatus.LIVE)
            .order_by(TemplateVersion.number.desc()).first())


def editable(template: Template) -> Editable:
    draft = versions.current_draft(template)
    live = live_version(template)
    source = draft or live
    content = {**empty_content(template.channel), **(source.content if source else {})}
    return Editable(content, draft, live)


def _create(template: Template, content: dict[str, Any], by: str) -> TemplateVersion:
    try:
        with database.atomic():
            return TemplateVersion.create(
                template=template, number=versions.next_number(template),
                status=VersionStatus.DRAFT,
                content=content, revision=1, edited_at=utcnow(), edited_by=by)
    except IntegrityError:  # another tab created the draft at the same moment
        raise DraftConflict(versions.current_draft(template), live_version(template)) from None


def save_draft(template: Template, content: dict[str, Any], basis: Basis,
               by: str) -> TemplateVersion:
    """Write ``content`` into the draft made from ``basis``; raises DraftConflict when the
    draft is not that one any more. Saving what the draft already holds always succeeds."""
    draft = versions.current_draft(template)
    if draft is not None and draft.content == content:
        return draft
    if draft is None:
        if basis.number is not None:  # the draft it was made from was published meanwhile
            raise DraftConflict(None, live_version(template))
        return _create(template, content, by)
    if (basis.number, basis.revision) != (draft.number, draft.revision):
        raise DraftConflict(draft, live_version(template))
    now = utcnow()
    written = (TemplateVersion.update(content=content, revision=draft.revision + 1,
                                      edited_at=now, edited_by=by)
               .where(TemplateVersion.id == draft.id, TemplateVersion.status == VersionStatus.DRAFT,
                      TemplateVersion.revision == draft.revision)
               .execute())
    if not written:
        raise DraftConflict(versions.current_draft(template), live_version(template))
    draft.content, draft.revision, draft.edited_at, draft.edited_by = (
        content, draft.revision + 1, now, by)
    return draft


def restore(template: Template, number: int, by: str) -> TemplateVersion:
    """The draft takes version ``number``'s content: a new draft when there is none (as
    `herald templates restore`), else the draft's text is replaced (its revision moves on,
    so an editor open on the old text is told rather than overwriting it)."""
    source = versions.get_version(template, number)
    if source.status == VersionStatus.DRAFT:
        raise versions.VersionError(f"version {number} is the draft itself")
    with database.atomic():
        draft = versions.current_draft(template)
        if draft is None:
            draft = versions.restore(template, number)
            draft.revision, draft.edited_at, draft.edited_by = 1, utcnow(), by
            draft.save()
            return draft
        draft.content = dict(source.content)
        draft.revision += 1
        draft.edited_at, draft.edited_by = utcnow(), by
        draft.save()
        return draft


def set_locked(template: Template, number: int, locked: bool) -> TemplateVersion:
    """Lock (kept whatever the retention, as `herald templates lock`) or unlock; an
    unlocked version past the plan's retention goes at the next publish."""
    if locked:
        return versions.lock(template, number)
    version = versions.get_version(template, number)
    if version.locked:
        version.locked = False
        version.save()
    return version
