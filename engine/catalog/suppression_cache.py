"""The suppression answers a preview reports, cached per process for a few seconds.

Designers preview the same template to the same recipients over and over, and the lookup
was a preview's only database round trip: about 15% of its cost
(docs/history/performance-rounds.md, tenth round). Delivery never reads this cache (the
worker's claim reads the list itself), so a late answer can only make a preview's report
late, never let a message through.

A suppression written anywhere (this process, the server's other workers, a bounce in a
worker, `herald apply`) bumps the workspace's suppression generation, which the preview's
admission round trip reads (engine/database/generations.py): a workspace's answers kept under
an older generation are dropped, so the next preview names the change. Each answer is the
address's scope, so a Marketing and a Transactional preview share it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from engine import runtime
from engine.database import generations, notification_store
from engine.database.generations import suppressions_scope
from engine.database.vocabulary import stops
from engine.formats import uuid_text

# At most this many addresses per workspace and this many workspaces: past either, that
# map starts over (a preview lists at most 1,000 recipients).
MAX_ADDRESSES = 5_000
MAX_WORKSPACES = 1_000

# workspace -> address -> (expires at, the scope of its suppression, or None: not on the list)
_answers: dict[str, dict[str, tuple[float, str | None]]] = {}
# workspace -> the suppression generation its answers were read under
_tags: dict[str, str | None] = {}
# How many times this process changed a list: an answer read from the database while a
# list changed is not kept.
_changes = 0
_lock = threading.Lock()


def suppressed(workspace_id: Any, keys: list[str], *, marketing: bool = True,
               topic: str | None = None) -> set[str]:
    """Which of the suppression ``keys`` are on the workspace's list (lower-cased) for a
    message of the Marketing stream (``marketing``, of ``topic``) or not: an answer holds
    each key's scope, so one cached answer serves both streams and every topic."""
    return {key for key, scope in scopes(workspace_id, keys).items()
            if stops(scope, marketing, topic)}


def scopes(workspace_id: Any, keys: list[str]) -> dict[str, str]:
    """Of the suppression ``keys`` (lower-cased), those on the workspace's list, each with
    its scope."""
    workspace = uuid_text.lower(workspace_id)
    wanted = sorted({k.lower() for k in keys})
    now = time.monotonic()
    scope = suppressions_scope(workspace)
    if workspace in _answers and not generations.current(_tags.get(workspace), scope):
        with _lock:
            _answers.pop(workspace, None)
    known = _answers.get(workspace, {})
    answers = [known.get(key) for key in wanted]
    if all(a is not None and a[0] > now for a in answers):
        return {key: answer[1] for key, answer in zip(wanted, answers, strict=True)
                if answer and answer[1] is not None}
    changes = _changes
    tag = generations.known(scope)
    found = notification_store.suppression_scopes(workspace_id, wanted)
    expires = now + runtime.settings().key_cache_seconds
    with _lock:
        if _changes == changes:
            if workspace not in _answers and len(_answers) >= MAX_WORKSPACES:
                _answers.clear()
            if _tags.get(workspace) != tag:
                _answers.pop(workspace, None)
                _tags[workspace] = tag
            entries = _answers.setdefault(workspace, {})
            if len(entries) + len(wanted) > MAX_ADDRESSES:
                entries.clear()
            entries.update((key, (expires, found.get(key))) for key in wanted)
    return found


def forget(workspace_id: Any) -> None:
    """Drop the workspace's answers once this process has changed its list (committed)."""
    global _changes
    with _lock:
        _changes += 1
        _answers.pop(str(workspace_id).lower(), None)


def clear() -> None:
    with _lock:
        _answers.clear()
        _tags.clear()
