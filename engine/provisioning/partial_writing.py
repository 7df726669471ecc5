"""`herald apply`, a workspace's `partials:`: each partial by name, its versions by position
as a template's are (the last published one live), then the checks a publish makes: no
partial includes itself and every partial called exists."""

from __future__ import annotations

from typing import Any

from engine.catalog import partials as catalog
from engine.database import generations
from engine.database.models import Workspace, utcnow
from engine.database.models.partials import Partial, PartialVersion
from engine.database.vocabulary import VersionStatus
from engine.provisioning.document import ApplyError, Outcome
from engine.rendering import compile_parts


def write_partials(out: Outcome, workspace: Workspace, nodes: list[dict[str, Any]],
                   path: str) -> None:
    """Create or update the workspace's partials from the document (checked before)."""
    for i, node in enumerate(nodes):
        name = node["name"]
        row = Partial.get_or_none(Partial.workspace == workspace, Partial.name == name)
        if row is None:
            row = Partial.create(workspace=workspace, name=name)
            out.count(out.created, "partials")
        _versions(out, row, node.get("versions") or [], f"{path}[{i}]")
    generations.changed_workspace(workspace.id)
    edges = catalog.graph(workspace.id)
    problems = []
    for i, node in enumerate(nodes):
        loop = catalog.cycle_through(node["name"], edges)
        if loop:
            problems.append(f"{path}[{i}]: the partial '{node['name']}' includes itself "
                            f"({' -> '.join(loop)})")
        elif found := catalog.problems_of_texts(
                [f"{{{{> {node['name']}}}}}"], edges) if node["name"] in edges else []:
            problems += [f"{path}[{i}]: {message}" for message in found]
    if problems:
        raise ApplyError(problems)


def _versions(out: Outcome, partial: Partial, nodes: list[dict[str, Any]], path: str) -> None:
    published = [i for i, v in enumerate(nodes) if v.get("status") == "published"]
    live_index = published[-1] if published else None
    existing = {v.number: v for v in partial.versions}
    for index, node in enumerate(nodes):
        number, body = index + 1, node.get("body", "")
        if node.get("status") == "published":
            status = VersionStatus.LIVE if index == live_index else VersionStatus.PREVIOUS
        else:
            status = VersionStatus.DRAFT
        row = existing.get(number)
        compiled = None if status == VersionStatus.DRAFT else compile_parts({"body": body})
        if row is None:
            PartialVersion.create(partial=partial, number=number, status=status, body=body,
                                  compiled=compiled,
                                  published_at=None if compiled is None else utcnow())
            out.count(out.created, "partialVersions")
            continue
        if row.status != VersionStatus.DRAFT and (row.body != body
                                                  or status == VersionStatus.DRAFT):
            raise ApplyError([f"{path}.versions[{index}]: partial {partial.name!r} version "
                              f"{number} is published; it cannot change (add a version)"])
        if row.status == status and row.body == body:
            continue
        row.status, row.body = status, body
        if row.compiled is None and compiled is not None:
            row.compiled, row.published_at = compiled, utcnow()
        row.save()
        out.count(out.updated, "partialVersions")
    if live_index is not None:
        demoted = (PartialVersion.update(status=VersionStatus.PREVIOUS)
                   .where(PartialVersion.partial == partial,
                          PartialVersion.status == VersionStatus.LIVE,
                          PartialVersion.number != live_index + 1).execute())
        if demoted:
            out.count(out.updated, "partialVersions", demoted)
