"""The Partials pages' engine side: the list, the one draft of a partial with autosave
(a compare-and-set on its revision, as a template's draft: engine/authoring/drafts.py),
and Publish through engine/catalog/partials.py, which checks and bumps the generation."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from peewee import IntegrityError, ModelSelect

from engine.catalog import partials, snapshots
from engine.database.db import database
from engine.database.models import Template, Workspace, utcnow
from engine.database.models.partials import Partial, PartialVersion
from engine.database.vocabulary import VersionStatus
from engine.people.prepared import PreparedSelect

from .drafts import MAX_FIELD_CHARS, Basis


class PartialConflict(Exception):
    """The partial's draft changed since the page loaded it (another tab, a publish)."""

    def __init__(self, current: PartialVersion | None) -> None:
        super().__init__("the draft changed since this page loaded it")
        self.current = current


@dataclass(frozen=True)
class Editable:
    """What the partial's page shows: the draft, else the live version, else empty."""

    body: str
    draft: PartialVersion | None
    live: PartialVersion | None

    @property
    def basis(self) -> Basis:
        return Basis(self.draft.number, self.draft.revision) if self.draft else Basis(None, 0)


def in_workspace(workspace: Workspace, partial_id: Any) -> Partial | None:
    try:
        key = partial_id if isinstance(partial_id, uuid.UUID) else uuid.UUID(str(partial_id))
    except ValueError:
        return None
    return Partial.get_or_none(Partial.id == key, Partial.workspace == workspace)


def listing(workspace: Workspace) -> list[tuple[Partial, PartialVersion | None, bool]]:
    """Each partial by name with its live version and whether it has a draft."""
    rows = list(Partial.select().where(Partial.workspace == workspace).order_by(Partial.name))
    found: dict[Any, dict[str, PartialVersion]] = {}
    for v in PartialVersion.select(PartialVersion.partial, PartialVersion.number,
                                   PartialVersion.status, PartialVersion.published_at).where(
            PartialVersion.partial.in_([r.id for r in rows] or [None]),
            PartialVersion.status.in_([VersionStatus.LIVE, VersionStatus.DRAFT])):
        found.setdefault(v.partial_id, {})[v.status] = v
    return [(r, found.get(r.id, {}).get(VersionStatus.LIVE),
             VersionStatus.DRAFT in found.get(r.id, {})) for r in rows]


def editable(partial: Partial) -> Editable:
    draft, live = partials.draft(partial), partials.live(partial)
    source = draft or live
    return Editable(source.body if source else "", draft, live)


def versions(partial: Partial) -> list[PartialVersion]:
    return list(PartialVersion.select().where(PartialVersion.partial == partial)
                .order_by(PartialVersion.number.desc()))


def body_from(value: object) -> str:
    text = (value if isinstance(value, str) else "").replace("\r\n", "\n")
    if len(text) > MAX_FIELD_CHARS:
        raise ValueError(f"At most {MAX_FIELD_CHARS:,} characters.")
    return text


def save_draft(partial: Partial, body: str, basis: Basis, by: str) -> PartialVersion:
    """Write ``body`` into the draft made from ``basis``; PartialConflict when the draft
    is not that one any more. Saving what the draft already holds always succeeds."""
    draft = partials.draft(partial)
    if draft is not None and draft.body == body:
        return draft
    if draft is None:
        if basis.number is not None:
            raise PartialConflict(None)
        live = partials.live(partial)
        if live is not None and live.body == body:
            return live
        try:
            with database.atomic():
                return PartialVersion.create(
                    partial=partial, number=partials.next_number(partial),
                    status=VersionStatus.DRAFT, body=body, revision=1, edited_at=utcnow(),
                    edited_by=by)
        except IntegrityError:
            raise PartialConflict(partials.draft(partial)) from None
    if (basis.number, basis.revision) != (draft.number, draft.revision):
        raise PartialConflict(draft)
    now = utcnow()
    written = (PartialVersion.update(body=body, revision=draft.revision + 1, edited_at=now,
                                     edited_by=by)
               .where(PartialVersion.id == draft.id,
                      PartialVersion.status == VersionStatus.DRAFT,
                      PartialVersion.revision == draft.revision).execute())
    if not written:
        raise PartialConflict(partials.draft(partial))
    draft.body, draft.revision, draft.edited_at, draft.edited_by = (
        body, draft.revision + 1, now, by)
    return draft


def publish_draft(partial: Partial, revision: int, by: str) -> PartialVersion:
    """Publish the draft at ``revision``: PartialError when there is none or it moved on,
    or when catalog.partials refuses it (a missing partial, a self-inclusion: named)."""
    with database.atomic():
        draft = partials.draft(partial)
        if draft is None:
            raise partials.PartialError("There is no draft to publish: the live version is "
                                        "the latest.")
        if draft.revision != revision:
            raise PartialConflict(draft)
        partials.publish(draft, by=by)
    snapshots.clear()  # this process at once; every other at its next request (generation)
    return draft


def delete(partial: Partial) -> None:
    """Delete a partial nothing calls (catalog.partials.PartialInUse names the callers)."""
    partials.delete(partial)
    snapshots.clear()


def rename(partial: Partial, name: str) -> Partial:
    """Rename a partial nothing calls (PartialInUse names the callers, PartialError a bad
    or taken name)."""
    renamed = partials.rename(partial, name)
    snapshots.clear()
    return renamed


def used_by(partial: Partial) -> list[Template]:
    return partials.used_by(partial.workspace_id, partial.name)


def _drafts_of(workspace_id: Any, status: str) -> ModelSelect:
    return (PartialVersion.select(Partial.name, PartialVersion.body).join(Partial)
            .where(Partial.workspace == workspace_id, PartialVersion.status == status))


# Asked at every keystroke's preview: its SQL is written once per process, not by peewee
# at each request (engine/people/prepared.py).
_DRAFTS = PreparedSelect("herald_partial_drafts", _drafts_of,
                         (Partial.workspace, PartialVersion.status),
                         (uuid.UUID(int=1), VersionStatus.DRAFT))


def preview_drafts(workspace: Workspace) -> dict[str, str]:
    """Each partial's draft body by name: the template editor previews with them, so an
    author sees a partial's change in the templates that call it before publishing it."""
    return dict(_DRAFTS.tuples(workspace.id, VersionStatus.DRAFT))
