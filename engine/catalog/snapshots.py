"""Per-process snapshots of what a send needs about a template, kept a few seconds.

A send then costs one insert instead of a dozen lookups. Published versions never change;
what can change (the live pointer, defaults, senders, entitlements) bumps the workspace's or
the account's generation, which the request's admission round trip checks
(engine/database/generations.py): the next request on every process sees it.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from engine import runtime
from engine.catalog.defaults import inherited_defaults
from engine.catalog.partials import live_bodies, partial_set
from engine.database import generations
from engine.database.generations import account_scope, workspace_scope
from engine.database.models import Account, Sender, Template, TemplateVersion, Workspace
from engine.database.vocabulary import VersionStatus
from engine.formats import uuid_text
from engine.formats.addresses import suppression_key
from engine.rendering import PartialSet


@dataclass
class TemplateSnapshot:
    template: Template
    workspace: Workspace
    account: Account
    defaults: dict[str, list[str]]
    domains: frozenset[str]
    addresses: frozenset[str]
    live: TemplateVersion | None
    # The workspace's live partials, as a render calls them (guarded by its generation too).
    partials: PartialSet = field(default_factory=lambda: PartialSet({}))
    _versions: dict[int, TemplateVersion | None] = field(default_factory=dict)

    def version(self, number: int) -> TemplateVersion | None:
        """A pinned version, kept with the snapshot: the last few only, since each may hold
        parts of a mebibyte and a caller can pin every version in turn."""
        if number not in self._versions:
            if len(self._versions) >= PINNED_VERSIONS_KEPT:
                self._versions.pop(next(iter(self._versions)))
            self._versions[number] = TemplateVersion.get_or_none(
                TemplateVersion.template == self.template, TemplateVersion.number == number)
        return self._versions[number]

    def sender_verified(self, bare: str) -> bool:
        """Senders are kept with their domain in ASCII form: either spelling of an
        internationalised domain is the same sender."""
        kept = suppression_key(bare)
        return kept in self.addresses or kept.rpartition("@")[2] in self.domains


Tags = tuple[str | None, str | None]
PINNED_VERSIONS_KEPT = 8
# Past this many snapshots the expired ones are dropped; past twice as many, all of them.
SNAPSHOTS_KEPT = 1000

# (workspace, template) -> (expires at, the snapshot or None, the workspace's and the
# account's generations read before it was loaded)
_cache: dict[tuple[str, str], tuple[float, TemplateSnapshot | None, Tags]] = {}
_lock = threading.Lock()


def _load(workspace_id: str, template_id: uuid.UUID) -> tuple[TemplateSnapshot | None, Tags]:
    ws_tag = generations.loaded(workspace_scope(workspace_id))
    template = Template.get_or_none(Template.id == template_id,
                                    Template.workspace == workspace_id)
    if template is None:
        return None, (ws_tag, None)
    workspace = Workspace.get_by_id(workspace_id)
    account = workspace.account
    account_tag = generations.loaded(account_scope(account.id))
    senders = list(Sender.select(Sender.kind, Sender.value).where(
        Sender.account == account, Sender.verified == True))  # noqa: E712
    # One live version per template; should a database hold two, the newest is the live one
    # (the file format's rule), never whichever the database returns first.
    live = TemplateVersion.select().where(
        TemplateVersion.template == template, TemplateVersion.status == VersionStatus.LIVE,
    ).order_by(TemplateVersion.number.desc()).first()
    return TemplateSnapshot(
        template, workspace, account, inherited_defaults(template),
        frozenset(s.value for s in senders if s.kind == "domain"),
        frozenset(s.value for s in senders if s.kind == "address"), live,
        partial_set(live_bodies(workspace_id)),
    ), (ws_tag, account_tag)


def _usable(snap: TemplateSnapshot | None, tags: Tags, workspace_id: str) -> bool:
    """A kept answer serves while its generations are current (a missing template is kept
    under the workspace's alone: creating one bumps it)."""
    if not generations.cached(tags[0], workspace_scope(workspace_id)):
        return False
    return snap is None or generations.cached(tags[1], account_scope(snap.account.id))


def snapshot(workspace_id: str, template_id: str) -> TemplateSnapshot | None:
    """The template of this workspace (None when there is none: another tenant's is none)."""
    canonical = uuid_text.canonical(template_id)
    if canonical is None:
        return None
    key = (workspace_id.lower(), canonical)
    now = time.monotonic()
    hit = _cache.get(key)
    if hit is not None and hit[0] > now and _usable(hit[1], hit[2], key[0]):
        return hit[1]
    snap, tags = _load(workspace_id, uuid.UUID(canonical))
    with _lock:
        if len(_cache) >= SNAPSHOTS_KEPT:  # an expired snapshot would otherwise stay for good
            for stale in [k for k, (until, *_) in _cache.items() if until <= now]:
                del _cache[stale]
            if len(_cache) >= 2 * SNAPSHOTS_KEPT:
                _cache.clear()
        _cache[key] = (now + runtime.settings().key_cache_seconds, snap, tags)
    return snap


def clear() -> None:
    with _lock:
        _cache.clear()


__all__: list[Any] = ["TemplateSnapshot", "clear", "snapshot"]
