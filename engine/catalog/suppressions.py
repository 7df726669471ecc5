"""Adding to a workspace's suppression list, the one way every writer does it (a bounce, an
unsubscribe, `herald apply`): each address kept as its suppression key, and this process's
cached preview answers for the workspace dropped once the rows are written.

Each row has a scope (docs/delivery.md, "Suppression scope"): ``all`` stops every message,
``marketing`` only Marketing email (a one-click unsubscribe). A write never narrows a row:
an unsubscribe of an address already suppressed for all mail changes nothing, while a bounce
(or a manual entry) of an address unsubscribed from Marketing widens its row to ``all``,
taking the new reason with it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from peewee import fn

from engine.catalog import suppression_cache
from engine.formats.addresses import suppression_key
from engine.store import generations
from engine.store.db import database
from engine.store.models import Suppression, utcnow
from engine.store.vocabulary import SuppressionScope, scope_for


def add(workspace_id: Any, addresses: Iterable[str], reason: str,
        scope: SuppressionScope | str | None = None) -> int:
    """Suppress ``addresses`` in the workspace for ``scope`` (by default the reason's: see
    ``vocabulary.scope_for``); returns how many were newly suppressed or widened to all."""
    scope = SuppressionScope(scope) if scope is not None else scope_for(reason)
    changed = 0
    for address in addresses:
        row, new = Suppression.get_or_create(workspace=workspace_id,
                                             address=suppression_key(address),
                                             defaults={"reason": reason, "scope": scope})
        if new:
            changed += 1
        elif scope == SuppressionScope.ALL and row.scope != SuppressionScope.ALL:
            changed += _widen(row.id, reason)
    suppression_cache.forget(workspace_id)
    if changed:
        generations.changed_suppressions(workspace_id)
    return changed


def _widen(row_id: Any, reason: str) -> int:
    """A Marketing-only row made ``all`` (unless another writer did it first)."""
    return Suppression.update(scope=SuppressionScope.ALL, reason=reason, created_at=utcnow()) \
        .where(Suppression.id == row_id, Suppression.scope != SuppressionScope.ALL).execute()


def remove(workspace_id: Any, address: str) -> bool:
    """Take ``address`` off the workspace's list; False when it was not on it."""
    deleted = Suppression.delete().where(Suppression.workspace == workspace_id,
                                         Suppression.address == suppression_key(address)).execute()
    suppression_cache.forget(workspace_id)
    if deleted:
        generations.changed_suppressions(workspace_id)
    return bool(deleted)


def search(workspace: Any, query: str = "", scope: str = "",
           limit: int = 200) -> tuple[list[Suppression], int]:
    """The newest ``limit`` rows of the workspace's list whose address holds ``query`` (a
    plain substring, never a LIKE pattern) in ``scope`` (all scopes when empty), and how
    many rows match."""
    rows = Suppression.select().where(Suppression.workspace == workspace)
    if scope:
        rows = rows.where(Suppression.scope == scope)
    if query:
        position = fn.INSTR if _sqlite() else fn.STRPOS
        rows = rows.where(position(Suppression.address, query.lower()) > 0)
    total = rows.count()
    return list(rows.order_by(Suppression.created_at.desc(), Suppression.address)
                .limit(limit)), total


def find(workspace: Any, row_id: Any) -> Suppression | None:
    """A row of the workspace's list (another workspace's is as absent as an unknown one)."""
    return Suppression.get_or_none(Suppression.id == row_id, Suppression.workspace == workspace)


def every(workspace: Any) -> Iterator[Suppression]:
    """The workspace's whole list by address, streamed (the CSV export)."""
    return (Suppression.select().where(Suppression.workspace == workspace)
            .order_by(Suppression.address).iterator())


def _sqlite() -> bool:
    return database.obj.__class__.__name__.startswith("Sqlite")
