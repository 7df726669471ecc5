"""A workspace's partials: their lifecycle (draft -> live -> previous, as template versions),
the checks a publish makes (every partial called exists, none includes itself, directly
or not) and the set a send renders with (each partial's live version).

A send reads the live versions through the template's snapshot (snapshots.py), which the
workspace's generation guards: publishing a partial bumps it, so the next request on every
process renders the new text in every template that calls it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from engine.catalog.parts import all_parts
from engine.database import generations
from engine.database.db import database
from engine.database.models import Template, TemplateVersion, utcnow
from engine.database.models.partials import Partial, PartialVersion
from engine.database.vocabulary import VersionStatus
from engine.rendering import (
    PartialSet,
    PartialSource,
    TemplateSyntaxError,
    compile_parts,
    partials_used,
)

NAME = re.compile(r"[A-Za-z0-9_-]{1,100}")
NAME_RULE = "a partial's name is 1 to 100 letters, digits, '_' or '-' (used as {{> name}})"


class PartialError(ValueError):
    """A partial or a template that calls partials cannot be published, or a name is bad."""


class PartialInUse(PartialError):
    """A partial that templates or other partials call cannot be deleted or renamed: the
    next send of each would fail (a live version's call names a partial that is gone)."""

    def __init__(self, name: str, templates: list[Template], partials: list[str]) -> None:
        named = [*(f"template '{t.name}'" for t in templates),
                 *(f"partial '{p}'" for p in partials)]
        super().__init__(f"the partial '{name}' is called by " + ", ".join(named))
        self.templates, self.partials = templates, partials


def live_bodies(workspace_id: Any) -> dict[str, PartialVersion]:
    """Each partial of the workspace that has a live version: name -> that version."""
    rows = (PartialVersion.select(PartialVersion, Partial)
            .join(Partial)
            .where(Partial.workspace == workspace_id,
                   PartialVersion.status == VersionStatus.LIVE)
            .order_by(PartialVersion.number))
    return {row.partial.name: row for row in rows}  # the newest live wins


def partial_set(live: Mapping[str, PartialVersion],
                drafts: Mapping[str, str] | None = None) -> PartialSet:
    """What a render may call: the live versions, with ``drafts`` (name -> text, the
    editor's preview) in place of theirs."""
    sources = {name: PartialSource(str(v.id), v.body, v.compiled) for name, v in live.items()}
    for name, text in (drafts or {}).items():
        sources[name] = PartialSource(None, text)
    return PartialSet(sources)


def _calls(text: str) -> set[str]:
    try:
        return partials_used(text)
    except TemplateSyntaxError:
        return set()  # its syntax error is reported on its own


def graph(workspace_id: Any, replaced: Mapping[str, str] | None = None) -> dict[str, set[str]]:
    """Partial name -> the partials its live body calls (``replaced`` overrides bodies)."""
    bodies = {name: v.body for name, v in live_bodies(workspace_id).items()}
    bodies.update(replaced or {})
    return {name: _calls(body) for name, body in bodies.items()}


def cycle_through(start: str, edges: Mapping[str, set[str]]) -> list[str] | None:
    """A chain of calls from ``start`` back to itself, if there is one."""
    path: list[str] = [start]
    seen: set[str] = set()

    def walk(name: str) -> list[str] | None:
        for nxt in sorted(edges.get(name, ())):
            if nxt == start:
                return [*path, start]
            if nxt in seen or nxt not in edges:
                continue
            seen.add(nxt)
            path.append(nxt)
            found = walk(nxt)
            if found:
                return found
            path.pop()
        return None
    return walk(start)


def problems_of_texts(texts: Iterable[str], edges: Mapping[str, set[str]]) -> list[str]:
    """Each partial the texts call (directly or through partials) that does not exist."""
    wanted: set[str] = set()
    for text in texts:
        wanted |= _calls(text)
    pending, missing, seen = list(wanted), [], set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        if name not in edges:
            missing.append(name)
        else:
            pending += edges[name]
    return [f"the partial '{name}' does not exist (or has no published version): "
            f"{{{{> {name}}}}} would fail every send" for name in sorted(missing)]


def check_publish(partial: Partial, body: str) -> None:
    """Refuse a body that does not parse, calls a partial that does not exist, or includes
    the partial itself (directly or through others); raises PartialError naming it."""
    from engine.rendering import check_template

    try:
        check_template(body)
    except TemplateSyntaxError as err:
        raise PartialError(f"Body: {err}") from None
    edges = graph(partial.workspace_id, {partial.name: body})
    loop = cycle_through(partial.name, edges)
    if loop:
        chain = " -> ".join(loop)
        raise PartialError(f"the partial '{partial.name}' includes itself ({chain}): "
                           "it would never finish rendering")
    found = problems_of_texts([body], edges)
    if found:
        raise PartialError("; ".join(found))


def _check_name(workspace_id: Any, name: str, keeping: Any = None) -> None:
    """Names are unique per workspace, ignoring case (``keeping``: a partial's own id)."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise PartialError(NAME_RULE)
    if any(p.name.lower() == name.lower() and p.id != keeping
           for p in Partial.select(Partial.id, Partial.name)
           .where(Partial.workspace == workspace_id)):
        raise PartialError(f"this workspace already has a partial named '{name}'")


def create(workspace_id: Any, name: str) -> Partial:
    """A new partial with an empty draft; names are unique per workspace, ignoring case."""
    _check_name(workspace_id, name)
    partial = Partial.create(workspace=workspace_id, name=name)
    PartialVersion.create(partial=partial, number=1, status=VersionStatus.DRAFT, body="")
    generations.changed_workspace(workspace_id)
    return partial


def draft(partial: Partial) -> PartialVersion | None:
    return (PartialVersion.select()
            .where(PartialVersion.partial == partial,
                   PartialVersion.status == VersionStatus.DRAFT)
            .order_by(PartialVersion.number.desc()).first())


def live(partial: Partial) -> PartialVersion | None:
    return (PartialVersion.select()
            .where(PartialVersion.partial == partial,
                   PartialVersion.status == VersionStatus.LIVE)
            .order_by(PartialVersion.number.desc()).first())


def next_number(partial: Partial) -> int:
    last = (PartialVersion.select(PartialVersion.number)
            .where(PartialVersion.partial == partial)
            .order_by(PartialVersion.number.desc()).first())
    return (last.number if last else 0) + 1


def publish(version: PartialVersion, by: str | None = None) -> PartialVersion:
    """Make ``version`` live after check_publish; the live one before it becomes previous,
    and the workspace's generation moves on (every process's next send sees it)."""
    if version.status != VersionStatus.DRAFT:
        raise PartialError(f"version {version.number} is {version.status}, not a draft")
    partial = version.partial
    check_publish(partial, version.body)
    (PartialVersion.update(status=VersionStatus.PREVIOUS)
     .where(PartialVersion.partial == partial, PartialVersion.status == VersionStatus.LIVE)
     .execute())
    version.status = VersionStatus.LIVE
    version.compiled = compile_parts({"body": version.body})
    version.published_at = utcnow()
    version.published_by = by
    version.save()
    generations.changed_workspace(partial.workspace_id)
    return version


def used_by(workspace_id: Any, name: str) -> list[Template]:
    """The templates whose live version or draft calls ``name``, directly or through
    other partials: what publishing it changes."""
    edges = graph(workspace_id)
    reaches: dict[str, bool] = {}

    def reach(called: str, trail: frozenset[str] = frozenset()) -> bool:
        if called == name:
            return True
        if called in reaches:
            return reaches[called]
        if called in trail:
            return False
        found = any(reach(n, trail | {called}) for n in edges.get(called, ()))
        reaches[called] = found
        return found

    rows = (TemplateVersion.select(TemplateVersion, Template).join(Template)
            .where(Template.workspace == workspace_id,
                   TemplateVersion.status.in_([VersionStatus.LIVE, VersionStatus.DRAFT])))
    hits: dict[Any, Template] = {}
    for row in rows:
        if row.template.id in hits:
            continue
        texts = list(all_parts(row.template.channel, row.content).values())
        if any(reach(n) for text in texts for n in _calls(text)):
            hits[row.template.id] = row.template
    return sorted(hits.values(), key=lambda t: t.name.lower())


def callers(partial: Partial) -> tuple[list[Template], list[str]]:
    """What calls ``partial``: the templates whose live version or draft does (directly or
    through other partials), and the other partials whose live version or draft does."""
    rows = (PartialVersion.select(PartialVersion.body, Partial.name).join(Partial)
            .where(Partial.workspace == partial.workspace_id, Partial.id != partial.id,
                   PartialVersion.status.in_([VersionStatus.LIVE, VersionStatus.DRAFT])))
    names = sorted({row.partial.name for row in rows if partial.name in _calls(row.body)},
                   key=str.lower)
    return used_by(partial.workspace_id, partial.name), names


def _refuse_in_use(partial: Partial) -> None:
    templates, names = callers(partial)
    if templates or names:
        raise PartialInUse(partial.name, templates, names)


def delete(partial: Partial) -> None:
    """Delete a partial no template or partial calls (PartialInUse names those that do);
    its versions go with it."""
    with database.atomic():
        _refuse_in_use(partial)
        PartialVersion.delete().where(PartialVersion.partial == partial).execute()
        partial.delete_instance()
    generations.changed_workspace(partial.workspace_id)


def rename(partial: Partial, name: str) -> Partial:
    """Rename a partial no template or partial calls: a rename never rewrites a published
    template (PartialInUse names the callers to move to a new partial first)."""
    name = (name or "").strip()
    if name == partial.name:
        return partial
    _check_name(partial.workspace_id, name, keeping=partial.id)
    with database.atomic():
        _refuse_in_use(partial)
        partial.name = name
        partial.save()
    generations.changed_workspace(partial.workspace_id)
    return partial
