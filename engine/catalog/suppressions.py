"""Adding to a workspace's suppression list, the one way every writer does it (a bounce, an
unsubscribe, `herald apply`): each address kept as its suppression key, and this process's
cached preview answers for the workspace dropped once the rows are written.

Each row has a scope (docs/delivery.md, "Suppression scope"): ``all`` stops every message,
``marketing`` only Marketing email (a one-click unsubscribe). A write never narrows a row:
an unsubscribe of an address already suppressed for all mail changes nothing, while a bounce
(or a manual entry) of an address unsubscribed from Marketing widens its row to ``all``,
taking the new reason with it.

``topic:NAME`` stops Marketing email of that topic (the preferences page): an address has
one such row per topic it left, besides at most one ``all`` or ``marketing`` row, and a
topic row is not written where that row already stops Marketing email."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from peewee import fn

from engine.catalog import suppression_cache
from engine.database import generations
from engine.database.db import database
from engine.database.models import Suppression, utcnow
from engine.database.vocabulary import TOPIC_PREFIX, SuppressionScope, scope_for
from engine.formats.addresses import suppression_key

# A topic's name (engine/catalog/topics.py): what follows ``topic:`` in a scope.
TOPIC_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,59}")


def add(workspace_id: Any, addresses: Iterable[str], reason: str,
        scope: SuppressionScope | str | None = None) -> int:
    """Suppress ``addresses`` in the workspace for ``scope`` (by default the reason's: see
    ``vocabulary.scope_for``); returns how many were newly suppressed or widened to all."""
    scope = _scope(scope) if scope is not None else scope_for(reason)
    changed = 0
    for address in addresses:
        changed += _add_one(workspace_id, suppression_key(address), reason, scope)
    suppression_cache.forget(workspace_id)
    if changed:
        generations.changed_suppressions(workspace_id)
    return changed


def _scope(scope: str) -> str:
    """``all``, ``marketing`` or ``topic:NAME`` (a ValueError for anything else)."""
    if str(scope).startswith(TOPIC_PREFIX):
        if not TOPIC_NAME.fullmatch(str(scope)[len(TOPIC_PREFIX):]):
            raise ValueError(f"not a topic scope: {scope!r}")
        return str(scope)
    return SuppressionScope(scope)


def _add_one(workspace_id: Any, key: str, reason: str, scope: str) -> int:
    streams = (Suppression.workspace == workspace_id) & (Suppression.address == key) & \
        Suppression.scope.in_((SuppressionScope.ALL, SuppressionScope.MARKETING))
    row = Suppression.get_or_none(streams)
    if scope.startswith(TOPIC_PREFIX):
        if row is not None:  # already stops every Marketing email
            return 0
        _, new = Suppression.get_or_create(workspace=workspace_id, address=key, scope=scope,
                                           defaults={"reason": reason})
        return int(new)
    if row is None:
        _, new = Suppression.get_or_create(workspace=workspace_id, address=key, scope=scope,
                                           defaults={"reason": reason})
        return int(new)
    if scope == SuppressionScope.ALL and row.scope != SuppressionScope.ALL:
        return _widen(row.id, reason)
    return 0


def _widen(row_id: Any, reason: str) -> int:
    """A Marketing-only row made ``all`` (unless another writer did it first)."""
    return Suppression.update(scope=SuppressionScope.ALL, reason=reason, created_at=utcnow()) \
        .where(Suppression.id == row_id, Suppression.scope != SuppressionScope.ALL).execute()


def remove(workspace_id: Any, address: str) -> bool:
    """Take ``address`` off the workspace's list (every scope); False when it was not on it."""
    deleted = Suppression.delete().where(Suppression.workspace == workspace_id,
                                         Suppression.address == suppression_key(address)).execute()
    return _removed(workspace_id, deleted)


def remove_row(workspace_id: Any, row_id: Any) -> bool:
    """Take one row off the workspace's list (an address's other scopes stay)."""
    deleted = Suppression.delete().where(Suppression.workspace == workspace_id,
                                         Suppression.id == row_id).execute()
    return _removed(workspace_id, deleted)


def lift(workspace_id: Any, address: str, scopes: Iterable[str],
         reasons: Iterable[str]) -> int:
    """Remove the address's rows of ``scopes`` written for one of ``reasons`` (a recipient
    taking back their own choice never lifts a bounce or an operator's entry)."""
    deleted = Suppression.delete().where(
        Suppression.workspace == workspace_id, Suppression.address == suppression_key(address),
        Suppression.scope.in_(list(scopes)), Suppression.reason.in_(list(reasons))).execute()
    _removed(workspace_id, deleted)
    return deleted


def _removed(workspace_id: Any, deleted: int) -> bool:
    suppression_cache.forget(workspace_id)
    if deleted:
        generations.changed_suppressions(workspace_id)
    return bool(deleted)


def scopes_of(workspace_id: Any, address: str) -> dict[str, str]:
    """The address's rows: each scope with its reason."""
    rows = Suppression.select(Suppression.scope, Suppression.reason).where(
        Suppression.workspace == workspace_id, Suppression.address == suppression_key(address))
    return dict(rows.tuples())


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
