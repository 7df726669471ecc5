"""The per-process template snapshots: which version is live, and what they keep in memory."""

from __future__ import annotations

import time

from engine.catalog import snapshots
from engine.catalog.versions import publish
from engine.database.models import TemplateVersion
from tests import factories


def _versions(count: int):
    ws = factories.workspace()
    tpl = factories.template(ws)  # version 1, live
    for number in range(2, count + 1):
        publish(TemplateVersion.create(template=tpl, number=number, status="draft",
                                       content={**TemplateVersion.get().content,
                                                "subject": f"v{number}"}))
    snapshots.clear()
    return ws, tpl


def test_two_live_versions_read_as_the_newest(settings):
    # A database an older apply left with two live versions: the snapshot must not pick
    # whichever row comes first.
    ws, tpl = _versions(3)
    TemplateVersion.update(status="live").where(TemplateVersion.number == 1).execute()
    TemplateVersion.update(status="live").where(TemplateVersion.number == 2).execute()
    assert snapshots.snapshot(str(ws.id), str(tpl.id)).live.number == 3


def test_a_snapshot_keeps_only_the_last_few_pinned_versions(settings):
    ws, tpl = _versions(snapshots.PINNED_VERSIONS_KEPT + 4)
    snap = snapshots.snapshot(str(ws.id), str(tpl.id))
    for number in range(1, snapshots.PINNED_VERSIONS_KEPT + 5):
        assert snap.version(number).number == number
    assert sorted(snap._versions) == list(range(5, snapshots.PINNED_VERSIONS_KEPT + 5))


def test_expired_snapshots_are_dropped_once_many_are_kept(settings, monkeypatch):
    monkeypatch.setattr(snapshots, "SNAPSHOTS_KEPT", 3)
    ws, tpl = _versions(1)
    others = [factories.template(ws) for _ in range(3)]
    snapshots.snapshot(str(ws.id), str(tpl.id))
    now = time.monotonic()
    for key, (_, snap, tags) in list(snapshots._cache.items()):
        snapshots._cache[key] = (now - 1, snap, tags)  # expired
    for other in others:
        snapshots.snapshot(str(ws.id), str(other.id))
    assert len(snapshots._cache) == 3
    assert (str(ws.id).lower(), str(tpl.id)) not in snapshots._cache
