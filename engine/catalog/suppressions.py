"""Adding to a workspace's suppression list, the one way every writer does it (a bounce, an
unsubscribe, `herald apply`): each address kept as its suppression key, and this process's
cached preview answers for the workspace dropped once the rows are written."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engine.catalog import suppression_cache
from engine.formats.addresses import suppression_key
from engine.store.models import Suppression


def add(workspace_id: Any, addresses: Iterable[str], reason: str) -> int:
    """Suppress ``addresses`` in the workspace; returns how many were not on the list yet."""
    created = 0
    for address in addresses:
        _, new = Suppression.get_or_create(workspace=workspace_id,
                                           address=suppression_key(address),
                                           defaults={"reason": reason})
        created += new
    suppression_cache.forget(workspace_id)
    return created


def remove(workspace_id: Any, address: str) -> bool:
    """Take ``address`` off the workspace's list; False when it was not on it."""
    deleted = Suppression.delete().where(Suppression.workspace == workspace_id,
                                         Suppression.address == suppression_key(address)).execute()
    suppression_cache.forget(workspace_id)
    return bool(deleted)
