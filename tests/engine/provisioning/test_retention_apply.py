"""``retentionDays`` in `herald apply` and `herald export`: 30 for a workspace the file
makes without it, the file's value otherwise, null kept forever; 1 to 3650 else refused."""

from __future__ import annotations

import copy

import pytest

from engine.database.models import Workspace
from engine.provisioning import ApplyError, apply_document
from engine.provisioning.exporting import export_document
from tests.engine.provisioning.sample_document import WS_ID, sample


def test_retention_days_applies_exports_and_reapplies_unchanged(db):
    doc = sample()
    apply_document(copy.deepcopy(doc))
    assert Workspace.get_by_id(WS_ID).retention_days == 30  # a new workspace's default
    assert export_document()["accounts"][0]["workspaces"][0]["retentionDays"] == 30
    doc["accounts"][0]["workspaces"][0]["retentionDays"] = 400
    assert apply_document(copy.deepcopy(doc)).as_json()["changed"] is True
    assert Workspace.get_by_id(WS_ID).retention_days == 400
    exported = export_document()
    assert exported["accounts"][0]["workspaces"][0]["retentionDays"] == 400
    assert apply_document(copy.deepcopy(exported)).as_json()["changed"] is False
    doc["accounts"][0]["workspaces"][0]["retentionDays"] = None
    apply_document(copy.deepcopy(doc))
    assert Workspace.get_by_id(WS_ID).retention_days is None
    assert export_document()["accounts"][0]["workspaces"][0]["retentionDays"] is None


@pytest.mark.parametrize("bad", [0, 3651, "30", True, 1.5])
def test_retention_days_outside_its_range_is_refused_with_its_path(db, bad):
    doc = sample()
    doc["accounts"][0]["workspaces"][0]["retentionDays"] = bad
    with pytest.raises(ApplyError) as refused:
        apply_document(doc)
    assert any(p.startswith("accounts[0].workspaces[0].retentionDays:")
               for p in refused.value.problems), refused.value.problems
    assert Workspace.select().count() == 0
